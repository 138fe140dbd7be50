import ArbiterServer
import ArbiterCluster

/// `GET /api/panels` on any node shows each panel as its leader has it: a node that
/// follows a panel asks the leader's node (`RelayMessage.stateQuery`) and answers with
/// what comes back (`LeaderStateGather`).
extension ClusterContext {
    /// Asks `leader` for `panel`'s state; `done` gets the leader's JSON object. Nil (and
    /// nothing sent) when the leader's node did not announce `panel-state` (an older
    /// version, which would close the link on the frame) or no link can carry it.
    func queryState(of panel: String, leader: String, address: String?, done: @escaping RelayQueries<[UInt8]>.Done) -> UInt64? {
        guard leader != node, runtime?.node(leader, supports: ClusterFeatures.panelState) == true else { return nil }
        let id = stateQueries.open(panel, node: leader, done: done)
        guard send(.stateQuery(panel: panel, id: id), toNode: leader, address: address) else {
            stateQueries.forget(id)
            return nil
        }
        return id
    }

    /// The leader's answer, past term fencing (`FollowerRelay.relayedFromLeader`).
    func stateAnswered(_ id: UInt64, panel: String, state: [UInt8], from node: String) {
        stateQueries.settle(id, panel, from: node)?(state)
    }
}
