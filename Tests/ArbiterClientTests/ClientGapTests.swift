import ArbiterClient
import Foundation
import Testing

/// A hole in the seq chain, which a real server never makes on purpose, from a scripted
/// one: the client passes nothing on past it, joins again on the same connection, and
/// goes on from the fresh snapshot.
@Suite("client: a gap in the seq chain")
struct ClientGapTests {
    static func left(_ seq: Int) -> String {
        #"{"type":"left","panel":"demo","name":"x","session":"s9","seq":\#(seq)}"#
    }

    static func snapshot(id: String, seq: Int) -> [String] {
        [
            #"{"type":"button","panel":"demo","button":"b1","kind":"tap","group":"main","state":"idle","owner":null,"progress":0.000,"owner_session":null,"id":"\#(id)"}"#,
            #"{"type":"ok","re":"join","panel":"demo","members":1,"fence":0,"seq":\#(seq),"id":"\#(id)"}"#,
        ]
    }

    @Test func aGapIsMadeGoodByJoiningAgain() async throws {
        let server = try ScriptedServer { cmd, id, joins in
            switch cmd {
            case "hello": return [#"{"type":"ok","re":"hello","name":"gap","session":"s1","role":"admin","id":"\#(id)"}"#]
            case "join" where joins == 0: return Self.snapshot(id: id, seq: 5)
            case "join": return Self.snapshot(id: id, seq: 20) + [Self.left(21)]
            // The app's PING (the client's own keepalives have ids of another form) brings
            // events 6, 8 and 9: 7 is missing.
            case "ping" where id.hasPrefix("c"): return [#"{"type":"pong","id":"\#(id)"}"#, Self.left(6), Self.left(8), Self.left(9)]
            case "ping": return [#"{"type":"pong","id":"\#(id)"}"#]
            default: return [#"{"type":"error","code":"bad-syntax","message":"not in the script","id":"\#(id)"}"#]
            }
        }
        let client = try await ArbiterClient.connect(hosts: ["127.0.0.1:\(server.port)"], name: "gap")
        let panel = try await client.join("demo")
        #expect(panel.state.seq == 5)
        let recorder = EventRecorder(panel.events)
        try await client.ping()
        try await recorder.expect("LEFT seq=21") { $0.seq == 21 }
        let seen = recorder.all
        #expect(seen.count == 3, "\(seen)")
        #expect(seen.first == .left(name: "x", session: "s9", seq: 6))
        guard case .resynced(let state, .gap(expected: 7, received: 8))? = seen.dropFirst().first else {
            Issue.record("no resync for the gap: \(seen)")
            return
        }
        #expect(state.seq == 20)
        #expect(panel.state.seq == 21)
        client.close()
    }
}
