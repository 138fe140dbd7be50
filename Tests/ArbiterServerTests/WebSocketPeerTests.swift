import ArbiterTestSupport
import ArbiterWire
import Foundation
import Testing

@Suite("WebSocket peers")
struct WebSocketPeerTests {
    @Test func joinAtOnceAndPressWithALinePeerWatching() throws {
        let server = try TestServer()
        let carol = try server.member("carol")
        let ws = try WebSocketClient(port: server.port, path: "/ws?panel=demo&name=alice")
        #expect(try ws.readText() == #"{"type":"welcome","session":"s2","name":"alice","proto":1}"#)
        let snapshot = try ws.readTexts(through: #""re":"join""#)
        #expect(snapshot.count == 6)
        #expect(
            snapshot[0]
                == #"{"type":"button","panel":"demo","button":"b1","kind":"tap","group":"main","state":"idle","owner":null,"progress":0.000,"owner_session":null}"#
        )
        #expect(try ws.readText() == #"{"type":"joined","panel":"demo","name":"alice","session":"s2","seq":2}"#)
        ws.sendText(#"{"cmd":"down","panel":"demo","button":"b1","id":"c7"}"#)
        #expect(try ws.readText() == #"{"type":"granted","panel":"demo","button":"b1","fence":1,"id":"c7"}"#)
        #expect(try ws.readText().hasPrefix(#"{"type":"pressed","panel":"demo","button":"b1","owner":"alice""#))
        #expect(try carol.expect("PRESSED") == "PRESSED demo b1 owner=alice session=s2 fence=1 seq=3")
        carol.send("DOWN demo b3")
        #expect(try carol.expect("DENIED") == "DENIED demo b3 reason=busy owner=alice active=b1 owner_session=s2")
    }

    @Test func aCommandInTwoFragmentsAndControlFramesBetween() throws {
        let server = try TestServer()
        let ws = try WebSocketClient(port: server.port, path: "/ws")
        _ = try ws.readText()
        ws.send(.text, Array(#"{"cmd":"ping","#.utf8), fin: false)
        ws.send(.ping, Array("are you there".utf8))
        ws.send(.continuation, Array(#""token":"t1"}"#.utf8))
        let pong = try ws.readFrame()
        #expect(pong.opcode == .pong)
        #expect(pong.payload == Array("are you there".utf8))
        #expect(try ws.readText() == #"{"type":"pong","token":"t1"}"#)
    }

    @Test func badJSONIsAnErrorAndTheSocketStays() throws {
        let server = try TestServer()
        let ws = try WebSocketClient(port: server.port, path: "/ws")
        _ = try ws.readText()
        ws.sendText("DOWN demo b1")
        #expect(try ws.readText().hasPrefix(#"{"type":"error","code":"bad-syntax","message":"invalid JSON"#))
        ws.sendText(#"{"cmd":"dwn","id":4}"#)
        let error = try ws.readText()
        #expect(error.hasPrefix(#"{"type":"error","code":"unknown-command""#))
        #expect(error.hasSuffix(#","id":4}"#))
        ws.sendText(#"{"cmd":"ping"}"#)
        #expect(try ws.readText() == #"{"type":"pong"}"#)
    }

    @Test func closeCodes() throws {
        let server = try TestServer { $0.maxWebSocketMessageBytes = 1000 }
        func close(after send: (WebSocketClient) -> Void) throws -> UInt16? {
            let ws = try WebSocketClient(port: server.port, path: "/ws")
            _ = try ws.readText()
            send(ws)
            let code = try ws.readClose()
            #expect(ws.socket.waitForClose())
            return code
        }
        #expect(try close { $0.send(.binary, [1, 2, 3]) } == 1003)
        #expect(try close { $0.send(.text, [0x7B, 0xFF, 0x7D]) } == 1007)
        #expect(try close { $0.send(.text, Array(repeating: 0x20, count: 2000)) } == 1009)
        #expect(try close { $0.send(.close, [0x03, 0xE8]) } == 1000)
        #expect(
            try close {
                $0.send(.text, [1], fin: true); $0.send(.continuation, [1])
            } == 1002)
        // QUIT: its reply, then the close handshake rather than a bare FIN.
        var quitReply: String?
        let quitCode = try close { ws in
            ws.sendText(#"{"cmd":"quit","id":1}"#)
            quitReply = try? ws.readText()
        }
        #expect(quitReply == #"{"type":"ok","re":"quit","id":1}"#)
        #expect(quitCode == 1000)
    }

    @Test func aWebSocketStaysJSON() throws {
        let server = try TestServer()
        let ws = try WebSocketClient(port: server.port, path: "/ws")
        _ = try ws.readText()
        ws.sendText(#"{"cmd":"hello","name":"w","format":"text"}"#)
        #expect(try ws.readText().hasPrefix(#"{"type":"error","code":"bad-syntax","message":"format=text does not apply to a WebSocket"#))
        ws.sendText(#"{"cmd":"hello","name":"w","format":"json"}"#)
        #expect(try ws.readText().hasPrefix(#"{"type":"ok","re":"hello","name":"w""#))
        ws.sendText(#"{"cmd":"ping","token":"still-json"}"#)
        #expect(try ws.readText() == #"{"type":"pong","token":"still-json"}"#)
    }

    @Test func handshakeErrors() throws {
        let server = try TestServer()
        let s = try RawSocket(port: server.port)
        s.send(
            "GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 8\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
        )
        let head = try s.readHead()
        #expect(head.hasPrefix("HTTP/1.1 426"))
        #expect(head.contains("Sec-WebSocket-Version: 13"))
        let t = try RawSocket(port: server.port)
        t.send("GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\r\n")
        #expect(try t.readHead().hasPrefix("HTTP/1.1 400"))
        #expect(throws: RawSocket.Failure.self) { try WebSocketClient(port: server.port, path: "/ws?echo=1") }
    }

    @Test func disconnectOfAWebSocketReleases() throws {
        let server = try TestServer()
        let carol = try server.member("carol")
        do {
            let ws = try WebSocketClient(port: server.port, path: "/ws?name=alice")
            _ = try ws.readText()
            ws.sendText(#"{"cmd":"down","panel":"demo","button":"sos"}"#)
            _ = try ws.readText()
        }
        #expect(try carol.expect("RELEASED demo sos").hasPrefix("RELEASED demo sos reason=disconnect owner=alice"))
    }
}
