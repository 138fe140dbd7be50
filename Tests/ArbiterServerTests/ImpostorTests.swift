import ArbiterTestSupport
import ArbiterWire
@testable import ArbiterServer
import Foundation
import Testing

@Suite("impostors: one name per session, owners named with their session")
struct ImpostorTests {
    /// A client from another address, on loopback.
    func other(_ server: TestServer, _ hello: String) throws -> (client: LineClient, reply: String) {
        let c = try LineClient(port: server.port, source: "127.0.0.2")
        c.send(hello)
        _ = try c.expect("WELCOME")
        return (c, try c.expect("OK HELLO"))
    }

    @Test func aNameInUseFromAnotherAddressIsMarked() throws {
        let server = try TestServer()
        let alice = try server.client(name: "alice")
        let (impostor, hello) = try other(server, "HELLO alice")
        #expect(hello.hasPrefix("OK HELLO name=alice-2 session="))
        // Renaming to one's own name keeps it; the next one from elsewhere is alice-3.
        alice.send("HELLO alice")
        #expect(try alice.expect("OK HELLO").hasPrefix("OK HELLO name=alice session="))
        let third = try LineClient(port: server.port, source: "127.0.0.3")
        third.send("HELLO alice")
        _ = try third.expect("WELCOME")
        #expect(try third.expect("OK HELLO").hasPrefix("OK HELLO name=alice-3 "))
        // A long name keeps within 32 bytes.
        let long = String(repeating: "x", count: 32)
        let first = try server.client(name: long)
        #expect(try other(server, "HELLO \(long)").reply.hasPrefix("OK HELLO name=\(String(repeating: "x", count: 30))-2 "))
        _ = first
        // A guest name is a name like any other.
        let guest = try server.client()
        let guestName = try #require(guest.received.first.flatMap { field("name", of: $0) })
        #expect(try other(server, "HELLO \(guestName)").reply.hasPrefix("OK HELLO name=\(guestName)-2 "))
        // A name is free again once its session is gone.
        alice.send("QUIT")
        #expect(alice.waitForClose())
        // The reactor frees the name in the block that closed the socket: once its queue
        // has run past that block, the name is free.
        for reactor in server.server.stateForTesting?.reactors ?? [] { reactor.queue.sync {} }
        impostor.send("HELLO alice")
        #expect(try impostor.expect("OK HELLO").hasPrefix("OK HELLO name=alice "))
    }

    /// A kiosk reloaded (or opened twice) connects again from the same address while the
    /// browser may keep its old WebSocket open: it keeps its name.
    @Test func theSameAddressKeepsItsName() throws {
        let server = try TestServer()
        let alice = try server.client(name: "alice")
        let again = try server.client(name: "alice")
        #expect(again.received.contains { $0.hasPrefix("OK HELLO name=alice ") })
        let ws = try WebSocketClient(port: server.port, path: "/ws?name=alice")
        #expect(try ws.readText().contains(#""name":"alice""#))
        // From another address it is marked, even while several sessions share it here.
        #expect(try other(server, "HELLO alice").reply.hasPrefix("OK HELLO name=alice-2 "))
        _ = alice
    }

    @Test func deniedAndSnapshotsNameTheOwnersSession() throws {
        let server = try TestServer()
        let alice = try server.member("alice")
        let bob = try server.member("bob")
        let aliceSession = try #require(field("session", of: alice.received.first { $0.hasPrefix("OK HELLO") } ?? ""))
        alice.send("DOWN demo b1")
        _ = try alice.expect("GRANTED")
        bob.send("DOWN demo b2")
        #expect(try bob.expect("DENIED") == "DENIED demo b2 reason=busy owner=alice active=b1 owner_session=\(aliceSession)")
        bob.send(#"{"cmd":"down","panel":"demo","button":"b3"}"#)
        #expect(try bob.expect(#"{"type":"denied""#).hasSuffix(#""owner":"alice","active":"b1","owner_session":"\#(aliceSession)"}"#))
        bob.send("JOIN demo")
        let snapshot = try bob.readLines(through: "OK JOIN")
        #expect(snapshot.contains("BUTTON demo b1 kind=tap group=main state=pressed owner=alice progress=0.000 owner_session=\(aliceSession)"))
        #expect(snapshot.contains("BUTTON demo b2 kind=tap group=main state=locked owner=alice progress=0.000 owner_session=\(aliceSession)"))
        #expect(snapshot.contains("BUTTON demo sos kind=hold group=emergency state=idle owner=- progress=0.000 owner_session=-"))
        let http = try RawSocket(port: server.port)
        http.send("GET /api/panels HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let body = try http.readResponse().body
        #expect(body.contains(#""state":"pressed","owner":"alice","owner_session":"\#(aliceSession)""#))
        #expect(body.contains(#""state":"idle","owner":null,"owner_session":null"#))
    }
}
