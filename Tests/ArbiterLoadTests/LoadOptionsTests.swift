import Testing
import ArbiterCore
import ArbiterWire
@testable import ArbiterLoadKit

@Suite struct LoadOptionsTests {
    @Test func flagsAndDefaults() throws {
        let o = try LoadOptions.parse(["fanout", "--members=1000", "--ws-fraction", "0.5", "--duration", "2.5", "--json"])
        #expect(o.workload == .fanout && o.connectionCount == 1000 && o.wsFraction == 0.5 && o.duration == 2.5 && o.json)
        #expect(try LoadOptions.parse(["contend"]).connectionCount == 10)
        #expect(try LoadOptions.parse(["idle"]).connectionCount == 1000)
        let redis = try LoadOptions.parse(["contend", "--redis", "127.0.0.1:6380"])
        #expect(redis.redisHost == "127.0.0.1" && redis.redisPort == 6380 && !redis.checks)
    }

    @Test func hostsAreIPv4OrIPv6Literals() throws {
        #expect(try LoadOptions.parse(["contend", "--host", "::1"]).host == "::1")
        #expect(try LoadOptions.parse(["contend", "--host", "[::1]"]).host == "::1")
        #expect(try LoadOptions.parse(["contend", "--host", "localhost"]).host == "127.0.0.1")
        let v6 = try LoadOptions.parse(["contend", "--host", "::1", "--port", "7071"])
        #expect(v6.serverAuthority == "[::1]:7071")
        let redis = try LoadOptions.parse(["contend", "--redis", "[::1]:6380"])
        #expect(redis.redisHost == "::1" && redis.redisPort == 6380 && redis.redisAuthority == "[::1]:6380")
        #expect(try LoadOptions.parse(["contend", "--redis", "::1:6380"]).redisHost == "::1")
        #expect(throws: LoadOptions.UsageError(message: "--host must be an IP address such as 127.0.0.1 or ::1 (or localhost), not 'example.org'")) {
            try LoadOptions.parse(["contend", "--host", "example.org"])
        }
        #expect(throws: LoadOptions.UsageError(message: "--redis must be HOST:PORT such as 127.0.0.1:6379 or [::1]:6379, not '[::1]'")) {
            try LoadOptions.parse(["contend", "--redis", "[::1]"])
        }
        #expect(throws: LoadOptions.UsageError.self) { try LoadOptions.parse(["contend", "--redis", "redis:6379"]) }
        let handshake = WebSocketClientHandshake(host: "::1", port: 7070, nonce: Array("the sample nonce".utf8))
        #expect(String(decoding: handshake.request, as: UTF8.self).contains("\r\nHost: [::1]:7070\r\n"))
    }

    @Test func mistakesAreExplained() throws {
        #expect(throws: LoadOptions.UsageError(message: "unknown argument '--conections'; did you mean --connections?")) {
            try LoadOptions.parse(["contend", "--conections", "3"])
        }
        #expect(
            throws: LoadOptions.UsageError(
                message: "unknown workload 'contention'; did you mean contend? Or choose one of contend, fanout, holds, idle, queue, buzz, config")
        ) {
            try LoadOptions.parse(["contention"])
        }
        #expect(
            throws: LoadOptions.UsageError(
                message: "unknown workload 'fanot'; did you mean fanout? Or choose one of contend, fanout, holds, idle, queue, buzz, config")
        ) {
            try LoadOptions.parse(["fanot", "--members", "10"])
        }
        #expect(
            throws: LoadOptions.UsageError(
                message: "unknown workload 'Hold'; did you mean holds? Or choose one of contend, fanout, holds, idle, queue, buzz, config")
        ) {
            try LoadOptions.parse(["Hold"])
        }
        // Nothing near: no guess, only the list.
        #expect(throws: LoadOptions.UsageError(message: "unknown workload 'benchmark'; choose one of contend, fanout, holds, idle, queue, buzz, config")) {
            try LoadOptions.parse(["benchmark"])
        }
        #expect(throws: LoadOptions.UsageError(message: "--ws-fraction must be from 0 to 1, not '2'")) {
            try LoadOptions.parse(["contend", "--ws-fraction", "2"])
        }
        #expect(throws: LoadOptions.UsageError.self) { try LoadOptions.parse(["holds", "--redis", "127.0.0.1:6379"]) }
        #expect(throws: LoadOptions.UsageError.self) { try LoadOptions.parse(["--port", "7070"]) }
        #expect(throws: LoadOptions.UsageError(message: "unexpected argument 'extra' after the workload contend; flags take one value each")) {
            try LoadOptions.parse(["contend", "extra"])
        }
        // The holds README's config: no tap buttons, only holds and talks.
        let holdsOnly = try LoadOptions.parse(["config", "--buttons", "0", "--holds", "4", "--talks", "4"])
        #expect(holdsOnly.buttons == 0 && ConfigWriter.panelJSON(holdsOnly).contains(#""id": "h4""#))
        #expect(!ConfigWriter.panelJSON(holdsOnly).contains(#""id": "b1""#))
        #expect(throws: LoadOptions.UsageError.self) { try LoadOptions.parse(["config", "--buttons", "0"]) }
        #expect(throws: LoadOptions.UsageError(message: "--buttons must be at least 1 for contend")) {
            try LoadOptions.parse(["contend", "--buttons", "0"])
        }
        #expect(throws: LoadOptions.UsageError(message: "--panels applies to contend and config, not fanout")) {
            try LoadOptions.parse(["fanout", "--panels", "2"])
        }
    }

    @Test func panelsAreNumberedAfterThePanelName() throws {
        #expect(try LoadOptions.parse(["contend"]).panelIDs == ["load"])
        #expect(try LoadOptions.parse(["contend", "--panels", "3", "--panel", "p"]).panelIDs == ["p1", "p2", "p3"])
        let panels = try ConfigDecoder.decode(Array(ConfigWriter.panelJSON(try LoadOptions.parse(["config", "--panels", "4", "--buttons", "5"])).utf8))
        #expect(panels.map(\.id) == ["load1", "load2", "load3", "load4"])
        #expect(panels.allSatisfy { $0.buttons.map(\.id) == ["b1", "b2", "b3", "b4", "b5"] })
        let contend = try LoadOptions.parse(["contend", "--observers", "0"])
        #expect(contend.checksOverlap)
        #expect(try LoadOptions.parse(["contend", "--redis", "127.0.0.1:1"]).checksOverlap)
        #expect(try !LoadOptions.parse(["contend", "--no-check"]).checksOverlap)
        #expect(try !LoadOptions.parse(["fanout"]).checksOverlap)
    }

    @Test func configIsAcceptedByTheServersDecoder() throws {
        var o = try LoadOptions.parse(["config", "--buttons", "6", "--groups", "3", "--holds", "2", "--talks", "1", "--hold-ms", "50"])
        o.panel = "bench"
        let panels = try ConfigDecoder.decode(Array(ConfigWriter.panelJSON(o).utf8))
        let panel = try #require(panels.first)
        #expect(panel.id == "bench")
        #expect(panel.buttons.map(\.id) == ["b1", "b2", "b3", "b4", "b5", "b6", "h1", "h2", "t1"])
        #expect(panel.buttons.map(\.group) == ["g1", "g2", "g3", "g1", "g2", "g3", "hold1", "hold2", "talk1"])
        #expect(panel.buttons[0].timeoutMs == 0 && panel.buttons[6].holdMs == 50 && panel.buttons[8].kind == .talk)
        let plain = try ConfigDecoder.decode(Array(ConfigWriter.panelJSON(try LoadOptions.parse(["config"])).utf8))
        #expect(plain[0].buttons.count == 100 && Set(plain[0].buttons.map(\.group)).count == 100)
    }

    /// `--announce`: written into a buzzer group by `config`, and what `buzz` holds the
    /// group's events to; the server's default when not given.
    @Test func announceGoesIntoTheConfigAndTheCheck() throws {
        func policy(_ arguments: [String]) throws -> GroupPolicy {
            let panels = try ConfigDecoder.decode(Array(ConfigWriter.panelJSON(try LoadOptions.parse(arguments)).utf8))
            return try #require(panels.first).policy(ofGroup: "g1")
        }
        let buzzer = ["config", "--buttons", "4", "--groups", "1", "--policy", "buzzer"]
        #expect(try policy(buzzer + ["--announce", "25"]) == .buzzer(earlyLockoutMs: 20, announce: 25, decisionWindowUs: GroupPolicy.defaultDecisionWindowUs))
        #expect(try policy(buzzer) == .buzzer(earlyLockoutMs: 20, announce: GroupPolicy.defaultAnnounce, decisionWindowUs: GroupPolicy.defaultDecisionWindowUs))
        #expect(try LoadOptions.parse(["buzz", "--announce", "3"]).announcedPlaces == 3)
        #expect(try LoadOptions.parse(["buzz"]).announcedPlaces == GroupPolicy.defaultAnnounce)
        #expect(throws: LoadOptions.UsageError(message: "--announce is a buzzer group's: config --policy buzzer --announce <n>")) {
            try LoadOptions.parse(["config", "--policy", "queue", "--announce", "3"])
        }
        #expect(throws: LoadOptions.UsageError(message: "--announce applies to buzz and config, not contend")) {
            try LoadOptions.parse(["contend", "--announce", "3"])
        }
        #expect(throws: LoadOptions.UsageError.self) { try LoadOptions.parse(["buzz", "--announce", "0"]) }
    }

    @Test func memoryAndCPUParsing() {
        #expect(ProcessMemory.parseVmRSS("Name:\tarbiter\nVmPeak:\t  9000 kB\nVmRSS:\t   18520 kB\n") == 18520 * 1024)
        #expect(ProcessMemory.parseVmRSS("Name:\tx\n") == nil)
        let stat = "4242 (my (odd) server) S 1 4242 4242 0 -1 4194560 500 0 0 0 150 50 0 0 20 0 3 0 100 0 0"
        #expect(CPUClock.parseStat(stat, ticksPerSecond: 100) == 2.0)
    }

    @Test func reportFormatting() {
        #expect(LoadReport.count(1_234_567.4) == "1,234,567")
        #expect(LoadReport.fixed(2.0049, 2) == "2.00")
        #expect(LoadReport.ms(1_500_000) == "1.500 ms")
        var decimal: [UInt8] = []
        CommandBook.appendDecimal(9_007_199_254_740_993, to: &decimal)
        CommandBook.appendDecimal(0, to: &decimal)
        #expect(String(decoding: decimal, as: UTF8.self) == "90071992547409930")
    }
}
