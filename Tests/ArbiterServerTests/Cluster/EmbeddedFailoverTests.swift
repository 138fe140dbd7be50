import ArbiterCluster
import ArbiterClusterTestSupport
import ArbiterCore
import ArbiterTestSupport
import Testing

@testable import ArbiterClusterServer
@testable import ArbiterServer

/// Failover bookkeeping on embedded nodes (`EmbeddedClusterNodes`): a crashed leader's
/// grants end `reason=failover`, the next term's snapshot follows, and late releases of
/// what the failover ended are answered `ended=failover`. The leader's lease runs out when
/// the test moves the manual clock past the TTL.
@Suite("cluster mode, embedded: failover bookkeeping")
struct EmbeddedFailoverTests {
    static let panel = PanelConfig(
        id: "demo", title: "Failover",
        buttons: [
            ButtonConfig(id: "b1", kind: .tap), ButtonConfig(id: "b2", kind: .tap), ButtonConfig(id: "b3", kind: .tap),
            ButtonConfig(id: "sos", kind: .hold, group: "emergency", holdMs: 4000, progressMs: 0),
            ButtonConfig(id: "quick", kind: .tap, group: "quick", timeoutMs: 200),
        ])

    /// A lease not renewed is gone at most this long after the crash.
    static let pastTheTTL: Int64 = 2_100

    /// Every member, on every surviving node, reads the failover release and then its
    /// new snapshot with nothing in between; the new term's fences are above the old.
    @Test func aCrashedLeadersGrantEndsWithFailoverThenTheNewTermsSnapshot() throws {
        let nodes = try EmbeddedClusterNodes(["n1", "n2", "n3"])
        let leader = try #require(nodes.leader())
        let followers = nodes.followers(of: leader)
        let (bob, joined) = try nodes.member(followers[0], name: "bob")
        let (carol, _) = try nodes.member(followers[0], name: "carol")
        let (dave, _) = try nodes.member(followers[1], name: "dave")
        let oldTerm = try #require(field("term", of: joined).flatMap { Int64($0) })
        bob.send("DOWN demo b1")
        let fence = try #require(field("fence", of: try bob.expect("GRANTED demo b1")).flatMap { UInt64($0) })
        for member in [bob, carol, dave] { _ = try member.expect("FIRED demo b1 owner=bob") }
        nodes.crash(leader)
        nodes.advance(milliseconds: Self.pastTheTTL)
        var terms: Set<Int64> = []
        for member in [bob, carol, dave] {
            #expect(try member.readLine() == "RELEASED demo b1 reason=failover owner=bob fence=\(fence)")
            let snapshot = try member.readLines(through: "OK JOIN")
            #expect(snapshot.dropLast().allSatisfy { $0.hasPrefix("BUTTON demo ") && $0.contains("state=idle") }, "\(snapshot)")
            if let term = snapshot.last.flatMap({ field("term", of: $0) }).flatMap({ Int64($0) }) { terms.insert(term) }
        }
        #expect(terms.count == 1 && (terms.first ?? 0) > oldTerm, "\(terms)")
        let newLeader = try #require(nodes.leader(), "\(nodes.describe("demo"))")
        #expect(newLeader != leader)
        bob.send("DOWN demo b2")
        let next = try #require(field("fence", of: try bob.expect("GRANTED demo b2")).flatMap { UInt64($0) })
        #expect(next > fence)
        _ = try dave.expect("PRESSED demo b2 owner=bob")
    }

    /// A leader cut off from etcd stops at its safe deadline: the hold in flight ends with
    /// `reason=failover` and never fires, presses get `ERROR unavailable`, and everything
    /// comes back by itself when etcd answers again, with fences above the old ones.
    @Test func aLeaderPastItsDeadlineStepsDownAndTheHoldNeverFires() throws {
        let nodes = try EmbeddedClusterNodes(["n1"])
        #expect(nodes.leader() == "n1")
        let (alice, joined) = try nodes.member("n1", name: "alice")
        let term = try #require(field("term", of: joined))
        alice.send("DOWN demo sos")
        let fence = try #require(field("fence", of: try alice.expect("GRANTED demo sos")))
        // The step-down comes from the lease's own watchdog; the node timer's lapse check
        // comes later (as in a real run, where it looks every 500 ms).
        nodes.context("n1")?.stopNodeTimerForTesting()
        nodes.leaseViews["n1"]?.setFailing(true)
        // Past the safe deadline (TTL minus the margin after the last answered keepalive).
        nodes.advance(milliseconds: 1_800, ticking: false)
        #expect(try alice.expect("RELEASED demo sos") == "RELEASED demo sos reason=failover owner=alice fence=\(fence)")
        let snapshot = try alice.readLines(through: "OK JOIN")
        #expect(snapshot.last.flatMap { field("term", of: $0) } == term)
        alice.send("DOWN demo b1")
        #expect(try alice.expect("ERROR").hasPrefix("ERROR unavailable panel demo has no leader right now"))
        // The hold was 4 s from the press; well past it, nothing fired.
        nodes.advance(milliseconds: 3_000)
        nodes.settle()
        let later = alice.drain()
        #expect(!later.contains { $0.hasPrefix("FIRED") || $0.hasPrefix("PROGRESS") }, "\(later)")
        nodes.etcdAnswersAgain("n1")
        let again = try alice.readLines(through: "OK JOIN")
        #expect(again.last.flatMap { field("term", of: $0) } != nil)
        alice.send("DOWN demo b1")
        let granted = try alice.expect("GRANTED demo b1")
        #expect((field("fence", of: granted).flatMap { UInt64($0) } ?? 0) > (UInt64(fence) ?? .max))
    }

    @Test func releasesOfGrantsTheCrashedLeaderHeldAreAnsweredEndedFailover() throws {
        let nodes = try EmbeddedClusterNodes(["n1", "n2", "n3"], panels: [Self.panel])
        let leader = try #require(nodes.leader())
        let followers = nodes.followers(of: leader)
        let (bob, _) = try nodes.member(followers[0], name: "bob")
        // Carol only presses: no JOIN, so her node hears no event of her grant.
        let carol = try nodes.client(followers[1], name: "carol")
        bob.send("DOWN demo b1")
        let fence = try #require(field("fence", of: try bob.expect("GRANTED demo b1")))
        // A grant that ended before the failover is not one the failover ended.
        bob.send("DOWN demo quick")
        _ = try bob.expect("GRANTED demo quick")
        nodes.advance(milliseconds: 200)
        _ = try bob.expect("RELEASED demo quick reason=timeout")
        carol.send("DOWN demo sos")
        let sosFence = try #require(field("fence", of: try carol.expect("GRANTED demo sos")))

        nodes.crash(leader)
        nodes.advance(milliseconds: Self.pastTheTTL)
        #expect(try bob.expect("RELEASED demo b1") == "RELEASED demo b1 reason=failover owner=bob fence=\(fence)")
        _ = try bob.readLines(through: "OK JOIN")
        _ = try #require(nodes.leader(), "\(nodes.describe("demo"))")

        bob.send("UP demo b1")
        #expect(try bob.expect("OK UP") == "OK UP demo b1 ended=failover")
        // Answered once, as a second UP after one's own is.
        bob.send("UP demo b1")
        #expect(try bob.expect("ERROR").hasPrefix("ERROR not-owner"))
        // Its node heard the leader end it: answered as the leader would have, once.
        bob.send("UP demo quick")
        #expect(try bob.expect("OK UP") == "OK UP demo quick ended=timeout")
        bob.send("UP demo quick")
        #expect(try bob.expect("ERROR").hasPrefix("ERROR not-owner"))
        // A press of the new term is released as usual.
        bob.send("DOWN demo b2")
        _ = try bob.expect("GRANTED demo b2")
        bob.send("UP demo b2")
        #expect(try bob.expect("OK UP") == "OK UP demo b2")
        _ = try bob.expect("RELEASED demo b2 reason=up owner=bob")

        // Another fence is not that grant's: the new leader answers it (every node follows
        // it now: `leader()` waited for that).
        carol.send("UP demo sos fence=\((UInt64(sosFence) ?? 0) + 7)")
        #expect(try carol.readLine().hasPrefix("ERROR stale-fence"))
        carol.send(#"{"cmd":"cancel","panel":"demo","button":"sos","fence":\#(sosFence),"id":5}"#)
        #expect(try carol.readLine() == #"{"type":"ok","re":"cancel","panel":"demo","button":"sos","ended":"failover","id":5}"#)
    }

    /// The leader's own session, its grant ended by its own step-down (cut off from etcd):
    /// answered while no node decides, and the next term's press is released as usual.
    @Test func aReleaseOnALeaderThatSteppedDownIsAnsweredEndedFailover() throws {
        let nodes = try EmbeddedClusterNodes(["n1"], panels: [Self.panel])
        #expect(nodes.leader() == "n1")
        let (alice, _) = try nodes.member("n1", name: "alice")
        alice.send("DOWN demo quick")
        _ = try alice.expect("GRANTED demo quick")
        nodes.advance(milliseconds: 200)
        _ = try alice.expect("RELEASED demo quick reason=timeout")
        alice.send("DOWN demo sos")
        _ = try alice.expect("GRANTED demo sos")
        nodes.context("n1")?.stopNodeTimerForTesting()
        nodes.leaseViews["n1"]?.setFailing(true)
        nodes.advance(milliseconds: 1_800, ticking: false)
        _ = try alice.expect("RELEASED demo sos reason=failover")
        _ = try alice.readLines(through: "OK JOIN")
        // A press refused with nothing done changes nothing of what the node knows.
        alice.send("DOWN demo sos")
        #expect(try alice.expect("ERROR").hasPrefix("ERROR unavailable panel demo has no leader right now"))
        alice.send("UP demo sos")
        #expect(try alice.expect("OK UP") == "OK UP demo sos ended=failover")
        // Its core had ended that one itself: the answer it would have given.
        alice.send("UP demo quick")
        #expect(try alice.expect("OK UP") == "OK UP demo quick ended=timeout")
        nodes.etcdAnswersAgain("n1")
        _ = try alice.readLines(through: "OK JOIN")
        alice.send("DOWN demo sos")
        _ = try alice.expect("GRANTED demo sos")
        alice.send("UP demo sos")
        #expect(try alice.expect("OK UP") == "OK UP demo sos")
        _ = try alice.expect("RELEASED demo sos reason=up owner=alice")
    }
}
