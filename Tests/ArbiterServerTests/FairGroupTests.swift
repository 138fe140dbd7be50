import ArbiterCore
import ArbiterIO
import ArbiterServer
import ArbiterTestSupport
import Foundation
import Testing

@Suite("queue and buzzer groups over loopback")
struct FairGroupTests {
    @Test func aQueuedSessionThatNeverJoinedIsGrantedWhenTheOwnerLetsGo() throws {
        let server = try TestServer(panels: [Panels.fair])
        let watcher = try server.member("watcher", panel: "f")
        let alice = try server.client(name: "alice")
        let bob = try server.client(name: "bob")
        alice.send("DOWN f a")
        #expect(try alice.readLine() == "GRANTED f a fence=1")
        bob.send("DOWN f b")
        #expect(try bob.readLine() == "QUEUED f b position=1 owner=alice")
        #expect(try watcher.expect("QUEUED").hasPrefix("QUEUED f b name=bob session=s"))
        alice.send("UP f a")
        #expect(try alice.readLine() == "OK UP f a")
        // bob sent nothing: he is told by a GRANTED of his own, with a new fence.
        #expect(try bob.readLine() == "GRANTED f b fence=2")
        _ = try watcher.expect("RELEASED f a reason=up")
        #expect(try watcher.readLine().hasPrefix("PRESSED f b owner=bob session=s"))
        #expect(try watcher.readLine().hasPrefix("FIRED f b owner=bob"))
    }

    @Test func snapshotShowsTheLineAndJSONCarriesNumbers() throws {
        let server = try TestServer(panels: [Panels.fair])
        let alice = try server.client(name: "alice")
        let bob = try server.client(name: "bob")
        alice.send("DOWN f a")
        _ = try alice.expect("GRANTED")
        bob.send(#"{"cmd":"down","panel":"f","button":"b","id":7}"#)
        #expect(try bob.readLine() == #"{"type":"queued","panel":"f","button":"b","position":1,"owner":"alice","id":7}"#)
        let viewer = try server.client(name: "viewer")
        viewer.send("JOIN f")
        let snapshot = try viewer.readLines(through: "OK JOIN")
        #expect(snapshot.contains { $0.hasPrefix("BUTTON f a kind=tap group=q policy=queue state=pressed owner=alice progress=0.000 owner_session=s") })
        #expect(snapshot.contains { $0.hasPrefix("WAITING f b name=bob session=s") && $0.hasSuffix(" position=1") })
        #expect(snapshot.contains("ROUND f quiz state=closed"))
        bob.send("CANCEL f b")
        #expect(try bob.readLine() == "OK CANCEL f b")
        let dequeued = try viewer.expect("DEQUEUED")
        #expect(dequeued.hasPrefix("DEQUEUED f b name=bob session=s") && dequeued.contains(" position=1 reason=cancel seq="))
    }

    @Test func theQueueIsFullPastMaxQueue() throws {
        let server = try TestServer(panels: [Panels.fair])
        let owner = try server.client(name: "o")
        owner.send("DOWN f a")
        _ = try owner.expect("GRANTED")
        var waiting: [LineClient] = []  // kept open: a closed one leaves the line
        for i in 1...2 {
            let c = try server.client(name: "w\(i)")
            waiting.append(c)
            c.send("DOWN f a")
            let reply = try c.readLine()
            #expect(reply == "QUEUED f a position=\(i) owner=o")
        }
        let late = try server.client(name: "late")
        late.send("DOWN f a")
        #expect(try late.readLine() == "DENIED f a reason=queue-full")
        let watcher = try server.member("watcher", panel: "f")
        waiting[0].close()
        #expect(try watcher.expect("DEQUEUED").contains(" position=1 reason=disconnect "))
        late.send("DOWN f a")
        #expect(try late.readLine() == "QUEUED f a position=2 owner=o", "w1 left on close, w2 moved up")
    }

    @Test func buzzerRoundRanksByArrivalAndTellsMembers() throws {
        let clock = ManualClock()
        let server = try TestServer(panels: [Panels.fair], clock: clock)
        let host = try server.member("host", panel: "f")
        let red = try server.client(name: "red")
        let blue = try server.client(name: "blue")
        red.send("DOWN f red")
        #expect(try red.readLine() == "DENIED f red reason=early")
        red.send("DOWN f red")
        #expect(try red.readLine() == "DENIED f red reason=locked-out")
        host.send("ARM f quiz")
        #expect(try host.readLine() == "OK ARM f quiz")
        #expect(try host.readLine().hasPrefix("ARMED f quiz seq="))
        blue.send("DOWN f blue")
        #expect(try blue.readLine() == "GRANTED f blue fence=1")
        clock.advance(milliseconds: 250)  // red's lockout runs out
        red.send("DOWN f red")
        let ranked = try red.readLine()
        #expect(ranked.hasPrefix("RANKED f red rank=2 after_us="))
        let after = Int(field("after_us", of: ranked) ?? "") ?? 0
        #expect(after >= 200_000)
        let buzzed = try host.expect("BUZZED")
        #expect(buzzed.hasPrefix("BUZZED f red name=red session=s") && buzzed.contains(" rank=2 after_us=\(after) seq="))
        host.send("HISTORY f 10")
        let history = try host.readLines(through: "OK HISTORY")
        #expect(history.contains { $0.hasPrefix("RECORD f - event=armed at=") && $0.contains(" group=quiz ") })
        #expect(history.contains { $0.hasPrefix("RECORD f red event=buzzed at=") && $0.contains(" rank=2 after_us=\(after) ") })
        host.send("RESET f")
        _ = try host.expect("OK RESET f")
        #expect(try host.expect("CLOSED").hasPrefix("CLOSED f quiz seq="))
    }

    @Test func twoDownsInOneReadBatchRankInByteOrder() throws {
        let server = try TestServer(panels: [Panels.fair])
        let host = try server.member("host", panel: "f")
        host.send("ARM f quiz")
        _ = try host.expect("ARMED")
        let c = try server.client(name: "two")
        let other = try server.client(name: "one")
        other.send("DOWN f red")
        _ = try other.expect("GRANTED")
        // One write, one read: both carry the same arrival time.
        c.send("DOWN f blue\nDOWN f red")
        #expect(try c.readLine() == "RANKED f blue rank=2 after_us=\(try rankAfter(host, 2))")
        #expect(try c.readLine().hasPrefix("RANKED f red rank=2 after_us="), "a session has one place per round")
    }

    func rankAfter(_ host: LineClient, _ rank: Int) throws -> String {
        let line = try host.expect("BUZZED")
        return field("after_us", of: line) ?? ""
    }

    /// The journal records lines and rounds; a restart keeps fences above every hand-off,
    /// HISTORY still shows them, and starts with empty lines and a closed round.
    @Test func aRestartKeepsFencesAboveHandOffsAndStartsWithEmptyLinesAndAClosedRound() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("fair-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        var handedOff = 0
        do {
            let server = try TestServer(panels: [Panels.fair]) { $0.journalPath = path }
            let alice = try server.client(name: "alice")
            let bob = try server.client(name: "bob")
            let carol = try server.client(name: "carol")
            alice.send("DOWN f a")
            _ = try alice.expect("GRANTED")
            bob.send("DOWN f b")
            _ = try bob.expect("QUEUED")
            carol.send("DOWN f a")
            _ = try carol.expect("QUEUED")
            alice.send("UP f a")
            handedOff = Int(field("fence", of: try bob.expect("GRANTED f b"))!)!
            alice.send("ARM f quiz")
            _ = try alice.expect("OK ARM")
            server.server.shutdown()
        }
        let server = try TestServer(panels: [Panels.fair]) { $0.journalPath = path }
        let c = try server.client(name: "again")
        c.send("JOIN f")
        let snapshot = try c.readLines(through: "OK JOIN")
        #expect(!snapshot.contains { $0.hasPrefix("WAITING") }, "lines were connections; none survive a restart")
        #expect(snapshot.contains("ROUND f quiz state=closed"))
        c.send("DOWN f a")
        #expect(Int(field("fence", of: try c.expect("GRANTED"))!)! > handedOff)
        c.send("HISTORY f 50")
        let history = try c.readLines(through: "OK HISTORY")
        #expect(history.contains { $0.hasPrefix("RECORD f b event=queued at=") && $0.contains(" name=bob ") })
        #expect(history.contains { $0.hasPrefix("RECORD f a event=dequeued at=") && $0.contains(" reason=shutdown ") })
        #expect(history.contains { $0.hasPrefix("RECORD f - event=armed at=") })
    }

    @Test func armNeedsABuzzerGroupAndHelpListsIt() throws {
        let server = try TestServer(panels: [Panels.fair])
        let c = try server.client(name: "c")
        c.send("ARM f q")
        #expect(try c.readLine().hasPrefix("ERROR no-such-group panel f has no buzzer group q"))
        c.send("ARM f")
        #expect(try c.readLine().hasPrefix("ERROR bad-syntax"))
        c.send("HELP")
        #expect(try c.readLines(through: "OK HELP").contains { $0.hasPrefix("# ARM <panel> <group>") })
    }
}
