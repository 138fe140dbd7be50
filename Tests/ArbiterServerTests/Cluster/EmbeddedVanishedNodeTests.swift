import ArbiterCluster
import ArbiterClusterTestSupport
import ArbiterCore
import ArbiterTestSupport
import Testing

@testable import ArbiterClusterServer
@testable import ArbiterServer

/// A node whose etcd registration vanishes (its lease expired) while its relay link is
/// still up: the leader ends its sessions' grants.
@Suite("cluster mode, embedded: vanished registrations")
struct EmbeddedVanishedNodeTests {
    /// The leader keeps its own lease while the follower's runs out.
    static let timing = ClusterTiming(ttlSeconds: 3, keepAliveIntervalMilliseconds: 300, safetyMarginMilliseconds: 500)
    /// demo with b1's tap timeout off: only the vanish can end the grant.
    static let panel: PanelConfig = {
        var panel = PanelConfig.demo
        panel.buttons[0].timeoutMs = 0
        return panel
    }()

    @Test func aNodeWhoseRegistrationExpiresLosesItsSessionsGrants() throws {
        let nodes = try EmbeddedClusterNodes(["n1", "n2"], panels: [Self.panel], timing: Self.timing)
        let (leader, follower) = try nodes.leaderAndFollower()
        let (alice, _) = try nodes.member(leader, name: "alice")
        let bob = try nodes.client(follower, name: "bob")
        bob.send("DOWN demo b1")
        _ = try bob.expect("GRANTED demo b1")
        _ = try alice.expect("PRESSED demo b1 owner=bob")
        nodes.leaseViews[follower]?.setFailing(true)
        // Past the follower's TTL: etcd drops its registration, the leader's next look sees it gone.
        nodes.advance(milliseconds: 3_100)
        let released = try alice.expect("RELEASED demo b1")
        #expect(released.contains("reason=disconnect owner=bob"), "\(released)")
    }
}
