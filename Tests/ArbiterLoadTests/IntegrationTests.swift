import Testing
@testable import ArbiterLoadKit

/// The generator against the real server binary over loopback: short bounded runs
/// (by cycle count, not by time) whose safety checker must come out clean.
@Suite(.serialized) struct IntegrationTests {
    static func config() throws -> String {
        ConfigWriter.panelJSON(
            try LoadOptions.parse([
                "config", "--buttons", "8", "--holds", "2", "--talks", "2",
                "--hold-ms", "60", "--long-ms", "30", "--min-talk-ms", "20",
            ]))
    }

    func options(_ arguments: [String], port: UInt16) throws -> LoadOptions {
        var o = try LoadOptions.parse(arguments)
        o.port = port
        return o
    }

    @Test func contendFanoutHoldsAndIdleAgainstTheRealServer() throws {
        let server = try ServerProcess(config: try Self.config())
        defer { server.stop() }

        let contend = LoadRunner.run(
            try options(
                [
                    "contend", "--connections", "12", "--buttons", "4", "--observers", "2",
                    "--cycles", "3000", "--threads", "2",
                ], port: server.port))
        #expect(contend.failure == nil, "\(contend.failure ?? "")")
        #expect(contend.exitCode == 0, "\(LoadReport.text(contend))")
        #expect(contend.checked && contend.violationCount == 0)
        #expect(contend.stats.cycles > 0 && contend.stats.denials > 0 && contend.stats.reply.count > 0)
        #expect(contend.eventsCompared > 0, "two observers must be compared")

        let fanout = LoadRunner.run(try options(["fanout", "--members", "20", "--pressers", "2", "--cycles", "300"], port: server.port))
        #expect(fanout.exitCode == 0, "\(LoadReport.text(fanout))")
        #expect(fanout.checked && fanout.violationCount == 0 && fanout.eventsCompared > 0)
        #expect(fanout.stats.event.count > 0, "press->event latency measured at members")

        let holds = LoadRunner.run(try options(["holds", "--connections", "6", "--cycles", "120", "--max-hold-ms", "120"], port: server.port))
        #expect(holds.exitCode == 0, "\(LoadReport.text(holds))")
        #expect(holds.checked && holds.violationCount == 0 && holds.eventsChecked > 0)

        let idle = LoadRunner.run(try options(["idle", "--connections", "40", "--server-pid", "\(server.pid)"], port: server.port))
        #expect(idle.exitCode == 0, "\(LoadReport.text(idle))")
        #expect(idle.memoryBefore != nil && idle.memoryAfter != nil)
    }

    @Test func queueAndBuzzAgainstTheRealServer() throws {
        let queueServer = try ServerProcess(config: ConfigWriter.panelJSON(try LoadOptions.parse(["config", "--buttons", "1", "--policy", "queue"])))
        defer { queueServer.stop() }
        let queue = LoadRunner.run(try options(["queue", "--connections", "8", "--cycles", "600", "--ws-fraction", "0.5"], port: queueServer.port))
        #expect(queue.exitCode == 0, "\(LoadReport.text(queue))")
        #expect(queue.checked && queue.violationCount == 0)
        #expect(queue.stats.handOffs > 0 && queue.stats.queued > 0)

        let buzzServer = try ServerProcess(
            config: ConfigWriter.panelJSON(try LoadOptions.parse(["config", "--buttons", "3", "--groups", "1", "--policy", "buzzer"])))
        defer { buzzServer.stop() }
        // Rounds take no press cycles: a short duration bounds the run.
        let buzz = LoadRunner.run(try options(["buzz", "--connections", "6", "--duration", "0.5"], port: buzzServer.port))
        #expect(buzz.exitCode == 0, "\(LoadReport.text(buzz))")
        #expect(buzz.checked && buzz.violationCount == 0)
        #expect(buzz.stats.rounds > 0 && buzz.stats.ranked >= 5 * buzz.stats.rounds && buzz.stats.earlyDenied > 0)
    }

    /// A group that tells members two places: the rest of each round is answered to its
    /// players alone, the host still ends every round, and the checker holds both the
    /// events and the replies. Given the wrong `--announce`, it says so.
    @Test func buzzWithFewerPlacesToldThanPlayers() throws {
        let config = ConfigWriter.panelJSON(try LoadOptions.parse(["config", "--buttons", "3", "--groups", "1", "--policy", "buzzer", "--announce", "2"]))
        let server = try ServerProcess(config: config)
        defer { server.stop() }
        let buzz = LoadRunner.run(
            try options(["buzz", "--connections", "8", "--announce", "2", "--duration", "0.5", "--ws-fraction", "0.5", "--observers", "2"], port: server.port))
        #expect(buzz.exitCode == 0, "\(LoadReport.text(buzz))")
        #expect(buzz.checked && buzz.violationCount == 0 && buzz.eventsCompared > 0)
        #expect(buzz.stats.rounds > 0 && buzz.stats.ranked >= 7 * buzz.stats.rounds)
        #expect(buzz.stats.reply.count >= 8 * buzz.stats.rounds, "press->RANKED measured at every player")
        #expect(buzz.stats.event.count > 0, "press->BUZZED measured at the observers")
        #expect(buzz.rankedRepliesChecked >= 6 * buzz.stats.rounds, "RANKED replies placed in their rounds")
        // One BUZZED per round (rank 2): ranks 3 to 8 are answered, not told.
        let order = Dictionary(uniqueKeysWithValues: buzz.orderCounts.map { ($0.0, $0.1) })
        #expect((order[.buzzed] ?? 0) <= order[.armed] ?? 0, "\(buzz.orderCounts)")

        // The default group tells ten places; a run that expects two reads too many.
        let defaultServer = try ServerProcess(
            config: ConfigWriter.panelJSON(try LoadOptions.parse(["config", "--buttons", "3", "--groups", "1", "--policy", "buzzer"])))
        defer { defaultServer.stop() }
        let wrong = LoadRunner.run(try options(["buzz", "--connections", "6", "--announce", "2", "--duration", "0.3"], port: defaultServer.port))
        #expect(wrong.exitCode == 1, "\(LoadReport.text(wrong))")
        #expect(wrong.violations.contains { $0.rule == .buzzerAnnounce }, "\(wrong.violations)")
    }

    @Test func contendOverIPv6Loopback() throws {
        let server = try ServerProcess(config: try Self.config(), host: "::1")
        defer { server.stop() }
        // Line and WebSocket peers, so both the connect and the Host header go over ::1.
        let o = try options(
            [
                "contend", "--host", "::1", "--connections", "6", "--buttons", "4",
                "--cycles", "600", "--ws-fraction", "0.5",
            ], port: server.port)
        let run = LoadRunner.run(o)
        #expect(run.exitCode == 0, "\(LoadReport.text(run))")
        #expect(run.checked && run.violationCount == 0 && run.stats.grants > 0)
        #expect(run.target == "arbiter [::1]:\(server.port)")
    }

    @Test func contendWithoutObserversIsCheckedAcrossPanels() throws {
        let config = ConfigWriter.panelJSON(try LoadOptions.parse(["config", "--panels", "3", "--buttons", "4"]))
        let server = try ServerProcess(config: config)
        defer { server.stop() }
        // No member receives events: only the overlap check watches, over three panels. It
        // also checks the grants answered while draining, which are not measured.
        let bare = LoadRunner.run(
            try options(
                [
                    "contend", "--panels", "3", "--connections", "9", "--observers", "0",
                    "--cycles", "3000", "--threads", "2", "--ws-fraction", "0.3",
                ], port: server.port))
        #expect(bare.exitCode == 0, "\(LoadReport.text(bare))")
        #expect(bare.overlapChecked && !bare.checked && bare.observers == 0 && bare.panels == 3 && bare.buttons == 12)
        #expect(bare.stats.grants > 0 && bare.grantsChecked >= bare.stats.grants && bare.stats.events == 0)
        #expect(LoadReport.text(bare).contains("grants checked for overlap (no observer)"))
        // With observers: one per panel, each panel's events checked by its own checker.
        let watched = LoadRunner.run(try options(["contend", "--panels", "3", "--connections", "9", "--cycles", "1500"], port: server.port))
        #expect(watched.exitCode == 0, "\(LoadReport.text(watched))")
        #expect(watched.checked && watched.overlapChecked && watched.observers == 3 && watched.eventsChecked > 0)
    }

    @Test func webSocketAndLinePeersTogether() throws {
        let server = try ServerProcess(config: try Self.config())
        defer { server.stop() }
        let contend = LoadRunner.run(
            try options(
                [
                    "contend", "--connections", "6", "--cycles", "600", "--ws-fraction", "0.5",
                    "--observers", "2",
                ], port: server.port))
        #expect(contend.exitCode == 0, "\(LoadReport.text(contend))")
        #expect(contend.webSocketConnections == 3 && contend.violationCount == 0)
        // Text and JSON members must decode every event to the same value.
        let fanout = LoadRunner.run(try options(["fanout", "--members", "8", "--cycles", "100", "--ws-fraction", "0.5"], port: server.port))
        #expect(fanout.exitCode == 0, "\(LoadReport.text(fanout))")
        #expect(fanout.webSocketConnections == 4 && fanout.eventsCompared > 0 && fanout.violationCount == 0)
    }

    @Test func webSocketPeersUpgradeAndReadTheirWelcome() throws {
        let fake = try FakeWebSocketServer(connections: 3)
        defer { fake.stop() }
        let idle = LoadRunner.run(try options(["idle", "--connections", "3", "--ws-fraction", "1"], port: fake.port))
        #expect(idle.failure == nil, "\(idle.failure ?? "")")
        #expect(idle.webSocketConnections == 3 && idle.exitCode == 0)
        #expect(fake.refusals.withLock { $0 }.isEmpty)
    }

    @Test func aServerThatIsNotThereFailsClearly() throws {
        // Port 1 on loopback: nothing listens there.
        let result = LoadRunner.run(try options(["contend", "--cycles", "10"], port: 1))
        #expect(result.exitCode == 2)
        #expect(result.failure?.hasPrefix("cannot connect to 127.0.0.1:1") == true)
    }
}
