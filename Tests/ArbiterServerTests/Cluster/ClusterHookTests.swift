import ArbiterCluster
import ArbiterClusterTestSupport
import ArbiterCore
import ArbiterHooks
import ArbiterTestSupport
import Foundation
import Testing

@testable import ArbiterClusterServer
@testable import ArbiterServer

/// Webhooks in cluster mode: the leader keeps a hooked event's deliveries in etcd before
/// any member sees the event, and a new leader finishes them with the same `webhook-id`.
/// Leases run on real time here (`ClusterTestNodes`): every wait is bounded and on events.
/// One cluster at a time: two of them with a receiver each, side by side, lapsed their
/// 2 s leases about one run in five on a loaded 2-core machine.
@Suite("cluster webhooks", .serialized)
struct ClusterHookTests {
    static let secret = Array("a hook secret of the cluster".utf8)

    static func panels(_ receiver: HookReceiver) -> [PanelConfig] {
        var panel = PanelConfig.demo
        panel.hooks = [HookConfig(url: "http://127.0.0.1:\(receiver.port)/in", events: ["pressed"], secret: secret)]
        return [panel]
    }

    static func pending(_ nodes: ClusterTestNodes) throws -> [EtcdKeyValue] {
        try nodes.etcd.view().range(.prefix(ClusterKeys().hooks("demo"))).kvs
    }

    /// What a Standard Webhooks library checks: the signature over id, timestamp and body.
    static func signed(_ r: HookReceiver.Received) -> Bool {
        guard let id = r.headers["webhook-id"], let stamp = r.headers["webhook-timestamp"].flatMap({ Int64($0) }) else { return false }
        return r.headers["webhook-signature"] == WebhookSignature.sign(key: secret, id: id, timestamp: stamp, body: r.body)
    }

    @Test func aStoredDeliveryReadsBackAsItWasWrittenAndOtherKeysAreSkipped() throws {
        let keys = ClusterKeys()
        let delivery = HookDelivery(id: "arb1_demo_7_3", seq: 3, body: Array(#"{"type":"pressed","owner":"a\"b"}"#.utf8), createdWallMs: 1_700)
        let value = ClusterHookStore.value(url: "http://127.0.0.1:9/in", term: 7, delivery)
        func kv(_ key: String) -> EtcdKeyValue {
            EtcdKeyValue(key: Array(key.utf8), value: Array(value.utf8), createRevision: 1, modRevision: 1, version: 1, lease: 0)
        }
        let found = try #require(ClusterHookStore.found(kv(keys.hook("demo/0", id: delivery.id)), prefix: keys.hooks("demo"), panel: "demo"))
        #expect(found.term == 7)
        #expect(found.pending == HookStore.Pending(hook: "demo/0", url: "http://127.0.0.1:9/in", delivery: delivery))
        #expect(ClusterHookStore.found(kv(keys.hooks("demo") + "x/" + delivery.id), prefix: keys.hooks("demo"), panel: "demo") == nil)
    }

    @Test func aHookedEventIsInEtcdBeforeAnyMemberSeesIt() throws {
        let receiver = try HookReceiver(.status(503))
        defer { receiver.close() }
        let nodes = try ClusterTestNodes(["a", "b"], panels: Self.panels(receiver))
        let (leader, follower) = try nodes.leaderAndFollower()
        let (bob, _) = try nodes.member(follower, name: "bob")
        let (carol, _) = try nodes.member(leader, name: "carol")
        let alice = try nodes.client(follower, name: "alice")
        let hooks = try #require(nodes.hookViews[leader])
        let before = hooks.callCount
        // The leader's write waits here; nothing of the press may reach a member meanwhile.
        hooks.hold()
        alice.send("DOWN demo b1")
        let entered = eventually { hooks.callCount > before }
        bob.readAvailable()
        carol.readAvailable()
        let seenEarly = (bob.received + carol.received).filter { $0.hasPrefix("PRESSED") }
        hooks.release()
        #expect(entered)
        #expect(seenEarly.isEmpty)
        _ = try bob.expect("PRESSED demo b1 owner=alice")
        _ = try carol.expect("PRESSED demo b1 owner=alice")
        let stored = try Self.pending(nodes)
        try #require(stored.count == 1, "pending in etcd: \(stored.map(\.keyText))")
        let got = receiver.wait(for: 1)
        try #require(!got.isEmpty)
        let id = try #require(got[0].headers["webhook-id"])
        #expect(stored[0].keyText.hasSuffix("/demo/0/\(id)"))
        #expect(Self.signed(got[0]))
        // Followers deliver nothing: every attempt is the leader's, for one event.
        #expect(Set(receiver.received.compactMap { $0.headers["webhook-id"] }) == [id])
    }

    @Test func aNewLeaderDeliversWhatTheOldOneCouldNotWithTheSameID() throws {
        let receiver = try HookReceiver(.status(503))
        defer { receiver.close() }
        let nodes = try ClusterTestNodes(["a", "b"], panels: Self.panels(receiver))
        let (leader, follower) = try nodes.leaderAndFollower()
        let (bob, _) = try nodes.member(follower, name: "bob")
        let alice = try nodes.client(follower, name: "alice")
        alice.send("DOWN demo b1")
        _ = try bob.expect("PRESSED demo b1 owner=alice")
        let failed = receiver.wait(for: 1)
        try #require(!failed.isEmpty)
        let id = try #require(failed[0].headers["webhook-id"])
        // The id names the term (the election key's create revision): a panel's seq
        // starts again with each.
        let term = try #require(try nodes.etcd.view().range(.key(ClusterKeys().leader("demo"))).kvs.first?.createRevision)
        #expect(id.contains("_demo_\(term)_"), "\(nodes.describe("demo"))")
        nodes.crash(leader)
        receiver.behavior = .status(200)
        #expect(nodes.leader(of: "demo") == follower, "\(nodes.describe("demo"))")
        // Deleted once delivered.
        #expect(eventually { (try? Self.pending(nodes).isEmpty) == true }, "still pending: \((try? Self.pending(nodes))?.map(\.keyText) ?? [])")
        let all = receiver.received
        #expect(Set(all.compactMap { $0.headers["webhook-id"] }) == [id])
        #expect(all.allSatisfy { $0.body == failed[0].body && Self.signed($0) })
        #expect(all.count >= 2)
    }
}
