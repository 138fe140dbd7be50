import ArbiterTestSupport
import Foundation
import Testing

@Suite("arbitration over loopback")
struct ArbitrationTests {
    @Test func fiftySimultaneousDownsMakeExactlyOneGrant() throws {
        let server = try TestServer()
        let watcher = try server.member("watcher")
        var clients: [LineClient] = []
        for i in 0..<50 { clients.append(try server.client(name: "p\(i)")) }
        // All fifty DOWNs are on the wire before any reply is read.
        for c in clients { c.send("DOWN demo b\(Int.random(in: 1...3))") }
        var granted: [String] = []
        var denied: [String] = []
        for c in clients {
            let reply = try c.readLine()
            if reply.hasPrefix("GRANTED") { granted.append(reply) } else { denied.append(reply) }
        }
        #expect(granted.count == 1)
        #expect(denied.count == 49)
        #expect(denied.allSatisfy { $0.contains("reason=busy") })
        let owners = Set(denied.compactMap { field("owner", of: $0) })
        #expect(owners.count == 1)
        let pressed = try watcher.expect("PRESSED")
        #expect(field("owner", of: pressed) == owners.first)
        #expect(watcher.drain(for: 0.2).filter { $0.hasPrefix("PRESSED") }.isEmpty)
    }

    @Test func everyMemberSeesTheSameGaplessOrder() throws {
        let server = try TestServer(panels: [Panels.quick])
        var members: [LineClient] = []
        for i in 0..<5 { members.append(try server.member("m\(i)", panel: "t")) }
        var pressers: [LineClient] = []
        for i in 0..<4 { pressers.append(try server.client(name: "p\(i)")) }
        for round in 0..<30 {
            for (i, p) in pressers.enumerated() {
                let button = ["b1", "b2", "sos", "talk"][(round + i) % 4]
                p.send(round % 3 == 2 ? "UP t \(button)" : "DOWN t \(button)")
            }
            for p in pressers { _ = try p.readLine() }
        }
        members[0].send("PING end")
        _ = try members[0].expect("PONG end")
        let lastSeq = members[0].received.compactMap { field("seq", of: $0) }.compactMap(Int.init).max() ?? 0
        #expect(lastSeq > 20)
        var streams: [[String]] = []
        for m in members {
            for _ in 0..<10_000 {
                if m.received.contains(where: { field("seq", of: $0) == "\(lastSeq)" }) { break }
                _ = try m.readLine()
            }
            let events = m.received.filter { line in line.contains(" seq=") && !line.hasPrefix("OK ") }
            let seqs = events.compactMap { field("seq", of: $0) }.compactMap(Int.init)
            #expect(seqs == Array((seqs.first ?? 1)...(seqs.last ?? 0)), "gapless")
            streams.append(events.filter { Int(field("seq", of: $0) ?? "0")! >= 10 && Int(field("seq", of: $0) ?? "0")! <= lastSeq })
        }
        for s in streams.dropFirst() { #expect(s == streams[0]) }
    }

    @Test func disconnectReleasesAndTheButtonCanBeTakenAgain() throws {
        let server = try TestServer()
        let watcher = try server.member("watcher")
        let a = try server.client(name: "a")
        a.send("DOWN demo b1\nDOWN demo sos")
        _ = try a.expect("GRANTED demo sos")
        a.close()
        #expect(try watcher.expect("RELEASED demo b1") == "RELEASED demo b1 reason=disconnect owner=a fence=1 seq=5")
        #expect(try watcher.expect("RELEASED demo sos").hasPrefix("RELEASED demo sos reason=disconnect owner=a fence=2"))
        let b = try server.client(name: "b")
        b.send("DOWN demo b1")
        #expect(try b.readLine() == "GRANTED demo b1 fence=3")
    }

    @Test func timeoutReleases() throws {
        let server = try TestServer(panels: [Panels.quick])
        let watcher = try server.member("watcher", panel: "t")
        let a = try server.client(name: "a")
        a.send("DOWN t b1")
        _ = try a.expect("GRANTED")
        let released = try watcher.expect("RELEASED", timeout: 3)
        #expect(released == "RELEASED t b1 reason=timeout owner=a fence=1 seq=4")
        a.send("UP t b1")
        #expect(try a.readLine() == "OK UP t b1 ended=timeout")
    }

    /// A reset ends the grant: the owner's first UP is `ended=reset`, every later one
    /// `not-owner`, as after one's own UP (text and JSON alike).
    @Test func theFirstUpAfterAResetIsEndedResetAndTheNextNotOwner() throws {
        let server = try TestServer()
        let a = try server.client(name: "a")
        let admin = try server.client(name: "admin")
        a.send("DOWN demo b1")
        _ = try a.expect("GRANTED demo b1 fence=1")
        admin.send("RESET demo")
        _ = try admin.expect("OK RESET demo")
        a.send("UP demo b1")
        #expect(try a.readLine() == "OK UP demo b1 ended=reset")
        a.send("UP demo b1")
        #expect(try a.readLine().hasPrefix("ERROR not-owner"))
        a.send(#"{"cmd":"up","panel":"demo","button":"b1","id":2}"#)
        #expect(try a.readLine().hasPrefix(#"{"type":"error","code":"not-owner""#))
        a.send("CANCEL demo b1 fence=1")
        #expect(try a.readLine().hasPrefix("ERROR stale-fence"))
    }

    @Test func holdFiresOnceAfterHoldMs() throws {
        let server = try TestServer(panels: [Panels.quick])
        let watcher = try server.member("watcher", panel: "t")
        let a = try server.client(name: "a")
        a.send("DOWN t sos")
        _ = try a.expect("GRANTED t sos fence=1")
        let lines = try watcher.readLines(through: "RELEASED", timeout: 3)
        let tail = Array(lines.suffix(3))
        #expect(tail.map { String($0.prefix(while: { $0 != " " })) } == ["PROGRESS", "FIRED", "RELEASED"])
        #expect(tail[0].hasPrefix("PROGRESS t sos value=1.000"))
        #expect(tail[2].contains("reason=fired"))
        #expect(lines.filter { $0.hasPrefix("MIDWAY") }.count == 1)
        #expect(lines.filter { $0.hasPrefix("FIRED") }.count == 1)
        a.send("UP t sos")
        #expect(try a.readLine() == "OK UP t sos ended=fired")
    }

    @Test func talkStartsAtLongMsAndStopsOnlyAtTheRelease() throws {
        let server = try TestServer(panels: [Panels.quick])
        let watcher = try server.member("watcher", panel: "t")
        let a = try server.client(name: "a")
        a.send("DOWN t talk")
        _ = try a.expect("GRANTED")
        _ = try watcher.expect("STARTED t talk", timeout: 3)
        #expect(watcher.drain(for: 0.4).isEmpty, "nothing ends the talk while the finger is down")
        a.send("UP t talk")
        #expect(try a.readLine() == "OK UP t talk")
        let stopped = try watcher.expect("STOPPED")
        #expect(stopped.contains("discarded=false reason=up"))
        #expect(Int(field("held_ms", of: stopped) ?? "0")! >= 400)
        #expect(try watcher.readLine().hasPrefix("RELEASED t talk reason=up"))
        a.send("DOWN t talk\nUP t talk")
        _ = try watcher.expect("TAPPED t talk")
    }
}
