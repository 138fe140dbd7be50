import Foundation
import Testing
@testable import ArbiterLoadKit

/// `--hosts`: connections spread over several nodes, and one whose node dies goes on
/// through another.
@Suite(.serialized) struct HostsTests {
    @Test func hostsAreParsedAndTheFirstIsTheSetupNode() throws {
        let o = try LoadOptions.parse(["contend", "--hosts", "127.0.0.1:7071,[::1]:7072,localhost:7073"])
        #expect(o.hosts == [LoadHost(host: "127.0.0.1", port: 7071), LoadHost(host: "::1", port: 7072), LoadHost(host: "127.0.0.1", port: 7073)])
        #expect(o.targets.map(\.authority) == ["127.0.0.1:7071", "[::1]:7072", "127.0.0.1:7073"])
        #expect(o.host == "127.0.0.1" && o.port == 7071)
        #expect(try LoadOptions.parse(["contend", "--port", "7075"]).targets == [LoadHost(host: "127.0.0.1", port: 7075)])
        #expect(throws: LoadOptions.UsageError.self) { try LoadOptions.parse(["contend", "--hosts", "127.0.0.1"]) }
        #expect(throws: LoadOptions.UsageError.self) { try LoadOptions.parse(["contend", "--hosts", "127.0.0.1:7071,"]) }
        #expect(throws: LoadOptions.UsageError.self) { try LoadOptions.parse(["contend", "--hosts", "example.org:7071"]) }
        #expect(throws: LoadOptions.UsageError.self) { try LoadOptions.parse(["contend", "--hosts", "127.0.0.1:7071", "--redis", "127.0.0.1:6379"]) }
    }

    /// Two independent single nodes stand in for a cluster's nodes (whose events would
    /// not agree, hence --no-check: the checker's failover rules are tested on doctored
    /// histories in FailoverCheckerTests). One goes away during the run, and its
    /// connections go on through the other with no error counted:
    /// - killed (SIGKILL): without reconnection the run would end with "the server closed
    ///   the connection";
    /// - stopped gracefully (SIGTERM, a rolling restart's step): it says `OK BYE
    ///   reason=shutdown`, and `ERROR shutting-down` to what it no longer runs, then
    ///   closes. Before, each goodbye and refusal counted as an error reply
    ///   (`bench/nemesis.py --faults restart`: over 1,000 of them ended the run).
    @Test(arguments: [SIGKILL, SIGTERM])
    func aConnectionWhoseNodeGoesAwayGoesOnThroughAnother(signal: Int32) throws {
        let config = try IntegrationTests.config()
        let a = try ServerProcess(config: config)
        let b = try ServerProcess(config: config)
        defer {
            a.stop()
            b.stop()
        }
        var o = try LoadOptions.parse([
            "contend", "--hosts", "127.0.0.1:\(a.port),127.0.0.1:\(b.port)", "--connections", "8",
            "--buttons", "4", "--duration", "2.5", "--no-check",
        ])
        o.seed = 7
        // Real time on purpose: the node goes away 1 s into a 2.5 s run of the real binary,
        // with connections mid-cycle on both nodes; no event of the run marks that moment.
        let signalAt = DispatchTime.now() + .milliseconds(1_000)
        let victim = a.pid
        DispatchQueue.global().asyncAfter(deadline: signalAt) { kill(victim, signal) }
        let run = LoadRunner.run(o)
        #expect(run.failure == nil, "\(run.failure ?? "")")
        #expect(run.exitCode == 0, "\(LoadReport.text(run))")
        #expect(run.stats.errors == 0, "\(run.stats.errorSamples)")
        #expect(run.stats.reconnects >= 4, "the connections on the node that went away: \(run.stats.reconnects)")
        #expect(run.stats.cycles > 0)
        #expect(run.target == "arbiter 127.0.0.1:\(a.port),127.0.0.1:\(b.port)")
    }

    @Test func aDeadFirstChoiceIsSkippedAtConnect() throws {
        let b = try ServerProcess(config: try IntegrationTests.config())
        defer { b.stop() }
        // A port nobody listens on (bound, then closed) as odd connections' first choice.
        let dead = try Self.closedPort()
        let o = try LoadOptions.parse([
            "contend", "--hosts", "127.0.0.1:\(b.port),127.0.0.1:\(dead)", "--connections", "4",
            "--buttons", "4", "--cycles", "200", "--no-check",
        ])
        let run = LoadRunner.run(o)
        #expect(run.exitCode == 0, "\(LoadReport.text(run))")
        #expect(run.stats.cycles > 0)
    }

    /// A failover seen from the pressers (issue 11): DOWNs answered `ERROR unavailable`
    /// while the panel has no leader are tried again after a pause, and UPs answered
    /// `stale-fence` or `OK UP ... ended=failover` (the grant's term ended) end their cycle
    /// and are counted as failover UPs; none of it is an error.
    /// Without that, each `unavailable` was retried at once and counted as an error
    /// (exit status 3), and an abort came after 1000 of them.
    @Test func unavailableDownsAreRetriedAndFailoverUpsEndTheCycle() throws {
        let node = try FakeFailoverNode(buttons: 4, unavailableDowns: 200, staleUps: 20, endedUps: 10)
        defer { node.stop() }
        let o = try LoadOptions.parse([
            "contend", "--hosts", "127.0.0.1:\(node.port),127.0.0.1:\(node.port)", "--connections", "4",
            "--buttons", "4", "--observers", "0", "--duration", "2.5", "--warmup", "0",
        ])
        let run = LoadRunner.run(o)
        #expect(run.failure == nil, "\(run.failure ?? "")")
        #expect(run.exitCode == 0, "\(LoadReport.text(run))")
        #expect(run.stats.errors == 0, "\(run.stats.errorSamples)")
        #expect(run.stats.unavailable > 0 && run.stats.unavailable <= 200)
        #expect(run.stats.failoverUps == 30)
        #expect(run.stats.cycles > 0)
    }

    /// Answers lost between nodes ("may or may not have been done"): a DOWN that was done is
    /// answered, when sent again, with the same grant and its older fence, which the
    /// observer-free check must take for the grant it is, not for a fence that went back;
    /// an UP that was not done is sent again, so no grant stays held.
    @Test func undecidedAnswersAreSettledWithoutFalseReportsOrStuckGrants() throws {
        let node = try FakeFailoverNode(buttons: 4, unavailableDowns: 0, staleUps: 0, lostDownReplies: 30, lostUpReplies: 30)
        defer { node.stop() }
        let o = try LoadOptions.parse([
            "contend", "--hosts", "127.0.0.1:\(node.port),127.0.0.1:\(node.port)", "--connections", "4",
            "--buttons", "4", "--observers", "0", "--duration", "2", "--warmup", "0",
        ])
        let run = LoadRunner.run(o)
        #expect(run.failure == nil, "\(run.failure ?? "")")
        #expect(run.exitCode == 0, "\(LoadReport.text(run))")
        #expect(run.stats.errors == 0, "\(run.stats.errorSamples)")
        #expect(run.stats.unavailable >= 60, "every lost answer was seen: \(run.stats.unavailable)")
        #expect(node.held == 0, "grants left held at the end: \(node.held)")
    }

    /// An UP refused with nothing done (its node's lease lapsed while etcd still keeps the
    /// node's sessions): the grant stands, so the UP is sent again. Before, the cycle ended
    /// as if a failover had ended the grant: a later DOWN on that button got the same grant
    /// back (nemesis seed 57: "fence 723131 ... is not above the fence 723131"), and the
    /// grant stayed held meanwhile.
    @Test func anUpRefusedWithNothingDoneIsSentAgain() throws {
        let node = try FakeFailoverNode(buttons: 4, unavailableDowns: 0, staleUps: 0, refusedUps: 30)
        defer { node.stop() }
        let o = try LoadOptions.parse([
            "contend", "--hosts", "127.0.0.1:\(node.port),127.0.0.1:\(node.port)", "--connections", "4",
            "--buttons", "4", "--observers", "0", "--duration", "2", "--warmup", "0",
        ])
        let run = LoadRunner.run(o)
        #expect(run.failure == nil, "\(run.failure ?? "")")
        #expect(run.exitCode == 0, "\(LoadReport.text(run))")
        #expect(run.stats.errors == 0, "\(run.stats.errorSamples)")
        #expect(run.stats.failoverUps == 0, "an UP refused with nothing done was taken for a grant a failover had ended")
        #expect(run.stats.unavailable >= 30, "every refusal was seen: \(run.stats.unavailable)")
        #expect(node.held == 0, "grants left held at the end: \(node.held)")
    }

    /// A JOIN answered `ERROR unavailable` (a connection that moved to another node while
    /// the panel's leader changed, or the final JOIN during a failover) is sent again after
    /// a pause. Before, the run ended with "could not set up". (The fake node sends no
    /// events, so the checker, which would miss every PRESSED, is off.)
    @Test func aJoinAnsweredUnavailableIsSentAgain() throws {
        let node = try FakeFailoverNode(buttons: 4, unavailableDowns: 0, staleUps: 0, unavailableJoins: 6)
        defer { node.stop() }
        let o = try LoadOptions.parse([
            "contend", "--hosts", "127.0.0.1:\(node.port),127.0.0.1:\(node.port)", "--connections", "2",
            "--buttons", "4", "--observers", "3", "--duration", "1", "--warmup", "0", "--no-check",
        ])
        let run = LoadRunner.run(o)
        #expect(run.failure == nil, "\(run.failure ?? "")")
        #expect(run.exitCode == 0, "\(LoadReport.text(run))")
        #expect(run.stats.cycles > 0)
    }

    static func closedPort() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw ServerProcess.StartError(description: "cannot bind a probe port") }
        return UInt16(bigEndian: address.sin_port)
    }
}
