import ArbiterCore
import Testing
@testable import ArbiterCluster

@Suite struct ClusterConfigTests {
    let key = Array("cluster secret".utf8)

    func panels(holdMs: Int64 = 3000, adminKey: String? = "a1") -> [PanelConfig] {
        [
            PanelConfig(
                id: "lobby",
                buttons: [
                    ButtonConfig(id: "door", kind: .tap),
                    ButtonConfig(id: "sos", kind: .hold, group: "emergency", holdMs: holdMs),
                ], keys: PanelKeys(admin: adminKey)),
            PanelConfig(id: "stage", buttons: [ButtonConfig(id: "talk", kind: .talk, group: "talk")]),
        ]
    }

    @Test func equalConfigsHaveEqualDigestsAndNoDifference() {
        let a = ClusterConfig(panels: panels(), clusterKey: key)
        let b = ClusterConfig(panels: panels(), clusterKey: key)
        #expect(a.digest == b.digest)
        #expect(a.digest.count == 64)
        #expect(a.firstDifference(from: b) == nil)
        #expect(ClusterConfig(text: a.text) == a)
    }

    @Test func theRefusalNamesTheFirstDifferingField() {
        let mine = ClusterConfig(panels: panels(holdMs: 3000), clusterKey: key)
        let cluster = ClusterConfig(panels: panels(holdMs: 2000), clusterKey: key)
        #expect(mine.digest != cluster.digest)
        #expect(
            mine.refusal(node: "n2", cluster: cluster)
                == "node n2's config differs from the cluster's: panels[0].buttons[1].hold_ms 3000 vs 2000")
    }

    @Test func aPanelKeyDifferenceIsNamedWithoutShowingEitherKey() {
        let mine = ClusterConfig(panels: panels(adminKey: "secret-one"), clusterKey: key)
        let cluster = ClusterConfig(panels: panels(adminKey: "secret-two"), clusterKey: key)
        let difference = mine.firstDifference(from: cluster)
        #expect(difference == "panels[0].keys.admin differs")
        #expect(!mine.text.contains("secret-one"))
    }

    @Test func orderLabelsAndMissingButtonsCount() {
        var reordered = panels()
        reordered.swapAt(0, 1)
        let base = ClusterConfig(panels: panels(), clusterKey: key)
        #expect(ClusterConfig(panels: reordered, clusterKey: key).firstDifference(from: base) == #"panels[0].id "stage" vs "lobby""#)
        var relabeled = panels()
        relabeled[1].buttons[0].label = "Talk now"
        #expect(ClusterConfig(panels: relabeled, clusterKey: key).firstDifference(from: base) == #"panels[1].buttons[0].label "Talk now" vs "talk""#)
        var shorter = panels()
        shorter.removeLast()
        #expect(ClusterConfig(panels: shorter, clusterKey: key).firstDifference(from: base) == "panels[1].id is missing from this node's config")
        #expect(base.firstDifference(from: ClusterConfig(panels: shorter, clusterKey: key)) == "panels[1].id is not in the cluster's config")
        var extraButton = panels()
        extraButton[0].buttons.append(ButtonConfig(id: "bell", kind: .tap))
        #expect(
            ClusterConfig(panels: extraButton, clusterKey: key).firstDifference(from: base)
                == "panels[0].buttons[2].id vs panels[1].id (a panel or button is missing on one side)")
    }

    @Test func theFirstNodePublishesAndALaterOneIsComparedThroughEtcd() throws {
        let clock = ManualClock()
        let etcd = InMemoryEtcd(clock: clock.read)
        let keys = ClusterKeys()
        let first = ClusterConfig(panels: panels(), clusterKey: key)
        #expect(first.verdict(on: try etcd.txn(first.publishTxn(keys: keys)), node: "n1") == nil)
        #expect(try etcd.get(keys.config)?.valueText == first.text)
        let same = ClusterConfig(panels: panels(), clusterKey: key)
        #expect(same.verdict(on: try etcd.txn(same.publishTxn(keys: keys)), node: "n2") == nil)
        let other = ClusterConfig(panels: panels(holdMs: 2000), clusterKey: key)
        #expect(
            other.verdict(on: try etcd.txn(other.publishTxn(keys: keys)), node: "n3")
                == "node n3's config differs from the cluster's: panels[0].buttons[1].hold_ms 2000 vs 3000")
        #expect(try etcd.get(keys.config)?.valueText == first.text, "a differing node must not overwrite the cluster's config")
    }

    @Test func aStoredTextOfAnotherShapeIsRefused() throws {
        let clock = ManualClock()
        let etcd = InMemoryEtcd(clock: clock.read)
        let keys = ClusterKeys()
        try etcd.put(keys.config, "something else")
        let mine = ClusterConfig(panels: panels(), clusterKey: key)
        let verdict = mine.verdict(on: try etcd.txn(mine.publishTxn(keys: keys)), node: "n1")
        #expect(verdict?.contains("cannot read the cluster's config") == true)
    }
}
