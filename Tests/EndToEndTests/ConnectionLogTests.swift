import ArbiterTestSupport
import Foundation
import Testing

/// The connection log, read where operators read it (the binary's standard error):
/// each closed connection says what the peer was and, for sessions, its name.
@Suite("end to end: connection logs")
struct ConnectionLogTests {
    func closedLine(_ arbiter: ArbiterProcess, session: String) -> String? {
        // Standard error is read asynchronously: look for up to 5 s.
        arbiter.waitForStderr(timeout: 5) { text in
            text.split(separator: "\n").first { $0.contains("msg=\"connection closed\" session=\(session) ") }.map(String.init)
        }
    }

    @Test func closedConnectionsSayTheirKindAndName() throws {
        let arbiter = try ArbiterProcess(["--port", "0"])
        defer { arbiter.terminate() }

        let line = try LineClient(port: arbiter.port)
        line.send("HELLO alice")
        let hello = try line.expect("OK HELLO")
        let lineSession = hello.split(separator: " ").first { $0.hasPrefix("session=") }.map { String($0.dropFirst(8)) } ?? "?"
        line.send("QUIT")
        _ = try line.expect("OK QUIT")
        let lineLog = closedLine(arbiter, session: lineSession)
        #expect(lineLog?.contains(" kind=line name=alice reason=") == true, "\(lineLog ?? arbiter.stderr)")

        let ws = try WebSocketClient(port: arbiter.port, path: "/ws?panel=demo&name=bob")
        let welcome = try ws.readText()
        let wsSession = welcome.components(separatedBy: "\"session\":\"").dropFirst().first?.split(separator: "\"").first.map(String.init) ?? "?"
        ws.sendText(#"{"cmd":"quit"}"#)
        let wsLog = closedLine(arbiter, session: wsSession)
        #expect(wsLog?.contains(" kind=websocket name=bob reason=") == true, "\(wsLog ?? arbiter.stderr)")

        let http = try RawSocket(port: arbiter.port)
        http.send("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        _ = try http.readHead()
        // The HTTP peer is the session after the WebSocket's; it has no name to log.
        let httpSession = "s\((Int(wsSession.dropFirst()) ?? 0) + 1)"
        let httpLog = closedLine(arbiter, session: httpSession)
        #expect(httpLog?.contains(" kind=http reason=") == true, "\(httpLog ?? arbiter.stderr)")
        #expect(httpLog?.contains("name=") == false)
    }
}
