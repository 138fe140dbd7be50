import ArbiterTestSupport
import Foundation
import Testing

@Suite("graceful shutdown")
struct ShutdownTests {
    @Test func releasesEverythingSaysGoodbyeAndCloses() throws {
        let server = try TestServer()
        let member = try server.member("member")
        let owner = try server.client(name: "owner")
        owner.send("DOWN demo b1\nDOWN demo talk")
        _ = try owner.expect("GRANTED demo talk")
        let ws = try WebSocketClient(port: server.port, path: "/ws?panel=demo&name=kiosk")
        _ = try ws.readTexts(through: #""type":"joined","panel":"demo","name":"kiosk""#)
        let started = Date()
        server.server.shutdown()
        #expect(Date().timeIntervalSince(started) < 2)
        let lines = try member.readLines(through: "OK BYE")
        #expect(lines.contains { $0.hasPrefix("RELEASED demo b1 reason=shutdown owner=owner") })
        #expect(lines.last == "OK BYE reason=shutdown")
        #expect(member.waitForClose())
        #expect(try owner.expect("OK BYE") == "OK BYE reason=shutdown")
        let released = try ws.readTexts(through: #""type":"released","panel":"demo","button":"b1""#).last
        #expect(released?.contains(#""reason":"shutdown""#) == true)
        #expect(try ws.readClose() == 1001)
        #expect((try? LineClient(port: server.port)) == nil, "no longer accepting")
    }
}
