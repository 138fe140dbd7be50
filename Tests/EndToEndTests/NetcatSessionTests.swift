import ArbiterTestSupport
import Foundation
import Testing

/// The real binary, driven the way two people with `nc localhost 7070` would.
@Suite("end to end: the arbiter binary")
struct NetcatSessionTests {
    @Test func twoTerminalsShareTheDemoPanel() throws {
        let arbiter = try ArbiterProcess(["--port", "0"])
        let alice = try LineClient(port: arbiter.port)
        let bob = try LineClient(port: arbiter.port)
        #expect(try alice.readLine().hasPrefix("WELCOME session="))
        #expect(try bob.readLine().hasPrefix("WELCOME session="))
        alice.send("hello alice")
        bob.send("HELLO bob")
        _ = try alice.expect("OK HELLO name=alice")
        _ = try bob.expect("OK HELLO name=bob")
        for c in [alice, bob] { c.send("JOIN demo") }
        _ = try alice.expect("JOINED demo name=alice")
        _ = try bob.expect("JOINED demo name=bob")

        // A highlight is seen by the other terminal.
        alice.send("DOWN demo b2")
        #expect(try alice.expect("GRANTED").hasPrefix("GRANTED demo b2 fence="))
        #expect(try bob.expect("PRESSED demo b2").contains("owner=alice"))
        bob.send("DOWN demo b3")
        #expect(try bob.expect("DENIED").hasPrefix("DENIED demo b3 reason=busy owner=alice active=b2 owner_session=s"))
        alice.send("UP demo b2")
        _ = try bob.expect("RELEASED demo b2 reason=up owner=alice")

        // The emergency button fires after three seconds of holding, exactly once.
        let pressedAt = Date()
        bob.send("DOWN demo sos")
        _ = try bob.expect("GRANTED demo sos")
        let hold = try alice.readLines(through: "RELEASED demo sos", timeout: 6)
        let heldFor = Date().timeIntervalSince(pressedAt)
        #expect(heldFor >= 2.9 && heldFor < 4.5, "fired after \(heldFor)s")
        #expect(hold.filter { $0.hasPrefix("FIRED demo sos") }.count == 1)
        #expect(hold.filter { $0.hasPrefix("MIDWAY demo sos") }.count == 1)
        #expect(hold.filter { $0.hasPrefix("PROGRESS demo sos") }.count >= 25)
        #expect(hold.suffix(3).map { String($0.prefix(8)) } == ["PROGRESS", "FIRED de", "RELEASED"])
        bob.send("UP demo sos")
        #expect(try bob.expect("OK UP") == "OK UP demo sos ended=fired")

        // Press-to-talk starts after a long press and stops only at the release.
        alice.send("DOWN demo talk")
        _ = try bob.expect("STARTED demo talk", timeout: 2)
        #expect(!bob.drain(for: 0.5).contains { $0.hasPrefix("STOPPED") })
        alice.send("UP demo talk")
        let stopped = try bob.expect("STOPPED demo talk")
        #expect(stopped.contains("discarded=false reason=up"))

        alice.send("QUIT")
        _ = try alice.expect("OK QUIT")
        #expect(alice.waitForClose())
        _ = try bob.expect("LEFT demo name=alice")
        #expect(arbiter.stderrContains("msg=\"connection opened\""))
        #expect(arbiter.stderrContains("msg=\"connection closed\""))
        arbiter.terminate()
        #expect(try arbiter.waitForExit(timeout: 5) == 0)
    }

    @Test func helpAndBadFlags() throws {
        let help = try ArbiterProcess.run(["--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("OVERVIEW:"))
        #expect(help.stdout.contains("USAGE: arbiter"))
        let version = try ArbiterProcess.run(["--version"])
        #expect(version.status == 0)
        #expect(version.stdout == "arbiter 1.0.0 (protocol 1)\n")
        let bad = try ArbiterProcess.run(["--prot", "7070"])
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("unknown argument '--prot'; did you mean --port?"))
        let badPort = try ArbiterProcess.run(["--port", "70000"])
        #expect(badPort.status == 64)
        #expect(badPort.stderr.contains("--port must be a number"))
        for host in ["10.0.0.300", "example.org", "::g", "[::1"] {
            let badHost = try ArbiterProcess.run(["--host", host])
            #expect(badHost.status == 64, "--host \(host)")
            #expect(badHost.stderr.contains("--host must be an IP address"), "--host \(host)")
        }
    }

    @Test func hostOriginBacklogAndBudgetFlags() throws {
        let arbiter = try ArbiterProcess([
            "--port", "0", "--allow-host", "Buttons.Example.org", "--allow-host", "[fe80::1]",
            "--allow-origin", "https://panel.example.org", "--backlog", "77",
            "--key-failures", "1", "--max-total-outbound", "1048576",
        ])
        defer { arbiter.terminate() }
        func status(_ headers: String, path: String = "/healthz") throws -> String {
            let s = try RawSocket(port: arbiter.port)
            s.send("GET \(path) HTTP/1.1\r\n\(headers)\r\n")
            return String(try s.readHead().prefix(12))
        }
        #expect(try status("Host: buttons.example.org\r\n") == "HTTP/1.1 200")
        #expect(try status("Host: [fe80::1]:7070\r\n") == "HTTP/1.1 200")
        #expect(try status("Host: evil.example\r\n") == "HTTP/1.1 421")
        let upgrade =
            "Host: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        #expect(try status(upgrade + "Origin: https://panel.example.org\r\n", path: "/ws") == "HTTP/1.1 101")
        #expect(try status(upgrade + "Origin: https://evil.example\r\n", path: "/ws") == "HTTP/1.1 403")
        for bad in [
            ["--allow-host", "a b"], ["--allow-host", "x:80"], ["--allow-origin", "ftp://x"], ["--backlog", "0"],
            ["--key-failures", "-1"], ["--max-total-outbound", "10"],
        ] {
            let result = try ArbiterProcess.run(bad)
            #expect(result.status == 64, "\(bad)")
            #expect(result.stderr.contains(bad[0]), "\(bad)")
        }
    }

    /// On a wildcard address the machine's own names are served: its host name and its
    /// interface addresses (traffic still only goes to 127.0.0.1; only `Host` differs).
    @Test func aWildcardServesTheMachinesNames() throws {
        let arbiter = try ArbiterProcess(["--host", "0.0.0.0", "--port", "0", "--open-admin"])
        defer { arbiter.terminate() }
        var buffer = [CChar](repeating: 0, count: 256)
        #expect(gethostname(&buffer, 255) == 0)
        let hostname = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var addresses: [String] = []
        var list: UnsafeMutablePointer<ifaddrs>?
        if getifaddrs(&list) == 0 {
            var next = list
            while let a = next {
                if let sa = a.pointee.ifa_addr, sa.pointee.sa_family == sa_family_t(AF_INET) {
                    var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
                    sa.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { sin in
                        var addr = sin.pointee.sin_addr
                        _ = inet_ntop(AF_INET, &addr, &text, socklen_t(text.count))
                    }
                    addresses.append(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
                }
                next = a.pointee.ifa_next
            }
            freeifaddrs(list)
        }
        func status(_ host: String) throws -> String {
            let s = try RawSocket(port: arbiter.port)
            s.send("GET /healthz HTTP/1.1\r\nHost: \(host)\r\n\r\n")
            return String(try s.readHead().prefix(12))
        }
        #expect(try status("\(hostname):\(arbiter.port)") == "HTTP/1.1 200")
        for address in addresses { #expect(try status("\(address):\(arbiter.port)") == "HTTP/1.1 200", "\(address)") }
        #expect(try status("not-\(hostname).example") == "HTTP/1.1 421")
    }

    /// `--host ::1` (and `[::1]`, as written in URLs) serves IPv6 peers; the log names
    /// them the way URLs do.
    @Test(arguments: ["::1", "[::1]"]) func servesIPv6(host: String) throws {
        let arbiter = try ArbiterProcess(["--host", host, "--port", "0"])
        defer { arbiter.terminate() }
        #expect(arbiter.stderrContains("msg=listening host=::1"))
        let c = try LineClient(host: "::1", port: arbiter.port)
        c.send("HELLO six")
        _ = try c.expect("OK HELLO name=six")
        c.send("DOWN demo b1")
        _ = try c.expect("GRANTED demo b1 fence=")
        #expect(arbiter.stderrContains("peer=[::1]:"))
    }

    @Test func badConfigIsRefusedWithFileAndPath() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("arbiter-e2e-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("bad.json")
        try Data(#"{"panels":[{"id":"hall","buttons":[{"id":"b1","kind":"push"}]}]}"#.utf8).write(to: file)
        let result = try ArbiterProcess.run(["--port", "0", "--config", file.path])
        #expect(result.status == 78)
        #expect(result.stderr.contains("\(file.path): panels[0].buttons[0].kind: must be tap, hold or talk"))
        let missing = try ArbiterProcess.run(["--port", "0", "--config", dir.appendingPathComponent("none.json").path])
        #expect(missing.status == 78)
        #expect(missing.stderr.contains("none.json: does not exist"))
    }

    @Test func goodConfigIsServed() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("arbiter-e2e-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("hall.json")
        try Data(#"{"panels":[{"id":"hall","title":"Quiz night","buttons":[{"id":"red","kind":"tap"},{"id":"blue","kind":"tap"}]}]}"#.utf8).write(to: file)
        let arbiter = try ArbiterProcess(["--port", "0", "--config", file.path])
        let c = try LineClient(port: arbiter.port)
        c.send("PANELS")
        #expect(try c.expect("PANEL ") == "PANEL hall buttons=2 members=0 title=\"Quiz night\"")
        c.send("DOWN demo b1")
        #expect(try c.expect("ERROR").hasPrefix("ERROR no-such-panel"))
    }
}
