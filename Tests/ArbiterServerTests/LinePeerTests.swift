import ArbiterTestSupport
import Foundation
import Testing

@Suite("line peers over loopback")
struct LinePeerTests {
    /// U+2028/U+2029 break lines for JavaScript and Python readers: never echoed raw.
    @Test func lineSeparatorsAreNeverEchoedRaw() throws {
        let server = try TestServer()
        let c = try server.client()
        c.send("PING a\u{2028}b\u{2029}c")
        #expect(try c.readLine() == "PONG \"a?b?c\"")
        c.send("PIN\u{2028}G")
        let error = try c.readLine()
        #expect(error.hasPrefix("ERROR unknown-command PIN?G is not a command"))
        c.send(#"{"cmd":"ping","token":"a\#u{2028}b"}"#)
        #expect(try c.readLine() == #"{"type":"pong","token":"a\u2028b"}"#)
        c.send("{\"cmd\":\"pin\u{2029}g\"}")
        let json = try c.readLine()
        #expect(json.contains(#"pin\u2029g is not a command"#))
        #expect(!c.received.joined().unicodeScalars.contains { $0.value == 0x2028 || $0.value == 0x2029 })
    }

    @Test func welcomeComesFirstAndNumbersSessions() throws {
        let server = try TestServer()
        let a = try LineClient(port: server.port)
        let b = try LineClient(port: server.port)
        let wa = try a.readLine()
        let wb = try b.readLine()
        #expect([wa, wb].sorted() == ["WELCOME session=s1 name=guest-1 proto=1", "WELCOME session=s2 name=guest-2 proto=1"])
    }

    @Test func aFirstLineGetsWelcomeThenItsReply() throws {
        let server = try TestServer()
        let c = try LineClient(port: server.port)
        c.send("PING now")
        #expect(try c.readLine().hasPrefix("WELCOME "))
        #expect(try c.readLine() == "PONG now")
    }

    @Test func twoTerminalsSeeEachOthersPress() throws {
        let server = try TestServer()
        let alice = try server.member("alice")
        let bob = try server.member("bob")
        _ = try alice.expect("JOINED demo name=bob")
        alice.send("DOWN demo b1")
        #expect(try alice.readLine() == "GRANTED demo b1 fence=1")
        #expect(try bob.expect("PRESSED") == "PRESSED demo b1 owner=alice session=s1 fence=1 seq=3")
        bob.send("DOWN demo b2")
        #expect(try bob.readLine() == "FIRED demo b1 owner=alice session=s1 fence=1 seq=4")
        #expect(try bob.readLine() == "DENIED demo b2 reason=busy owner=alice active=b1 owner_session=s1")
        bob.send("JOIN demo")
        let snapshot = try bob.readLines(through: "OK JOIN")
        #expect(snapshot.contains("BUTTON demo b1 kind=tap group=main state=pressed owner=alice progress=0.000 owner_session=s1"))
        #expect(snapshot.contains("BUTTON demo b2 kind=tap group=main state=locked owner=alice progress=0.000 owner_session=s1"))
        #expect(snapshot.last == "OK JOIN demo members=2 fence=1 seq=4")
        alice.send("UP demo b1")
        _ = try alice.expect("OK UP demo b1")
        #expect(try bob.expect("RELEASED") == "RELEASED demo b1 reason=up owner=alice fence=1 seq=5")
    }

    @Test func pipelinedRepliesKeepOrderAndPrecedeTheirEvents() throws {
        let server = try TestServer()
        let c = try server.member("carol")
        c.send("PING 1\nDOWN demo b1\nPING 2\nUP demo b1\nPANELS\nPING 3")
        let lines = try c.readLines(through: "PONG 3")
        #expect(
            lines == [
                "PONG 1", "GRANTED demo b1 fence=1",
                "PRESSED demo b1 owner=carol session=s1 fence=1 seq=2", "FIRED demo b1 owner=carol session=s1 fence=1 seq=3",
                "PONG 2", "OK UP demo b1", "RELEASED demo b1 reason=up owner=carol fence=1 seq=4",
                "PANEL demo buttons=5 members=1 title=\"Demo\"", "OK PANELS count=1", "PONG 3",
            ])
    }

    @Test func quitSaysGoodbyeAndCloses() throws {
        let server = try TestServer()
        let c = try server.client()
        c.send("QUIT\nPING after")
        #expect(try c.readLine() == "OK QUIT")
        #expect(c.waitForClose())
        #expect(!c.received.contains("PONG after"))
    }

    @Test func jsonOnALinePeer() throws {
        let server = try TestServer()
        let c = try server.client()
        c.send(#"{"cmd":"ping","token":"t","id":"p1"}"#)
        #expect(try c.readLine() == #"{"type":"pong","token":"t","id":"p1"}"#)
        c.send("HELLO dana format=json")
        #expect(try c.readLine() == #"{"type":"ok","re":"hello","name":"dana","session":"s1","role":"admin"}"#)
        c.send(#"{"cmd":"down","panel":"demo","button":"b1","id":"c7"}"#)
        #expect(try c.readLine() == #"{"type":"granted","panel":"demo","button":"b1","fence":1,"id":"c7"}"#)
        c.send("JOIN demo")
        _ = try c.expect(#"{"type":"ok","re":"join""#)
        #expect(!c.received.contains { $0.hasPrefix("BUTTON") }, "a text command is answered in the connection's form")
        #expect(try c.readLine() == #"{"type":"joined","panel":"demo","name":"dana","session":"s1","seq":3}"#)
    }

    @Test func kickClosesTheSessionAndReleasesWhatItOwned() throws {
        let server = try TestServer()
        let watcher = try server.member("watcher")
        let victim = try server.client(name: "victim")
        victim.send("DOWN demo b1")
        _ = try victim.expect("GRANTED")
        watcher.send("KICK s2")
        #expect(try watcher.expect("OK KICK") == "OK KICK s2")
        #expect(try watcher.expect("RELEASED") == "RELEASED demo b1 reason=disconnect owner=victim fence=1 seq=4")
        #expect(victim.waitForClose())
        watcher.send("KICK s2")
        #expect(try watcher.expect("ERROR").hasPrefix("ERROR no-such-session"))
    }
}
