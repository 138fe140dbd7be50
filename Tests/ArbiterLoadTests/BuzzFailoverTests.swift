import ArbiterLoadKit
import Testing

/// `arbiter-load buzz --hosts` when faults take presses away (issue 11): a round must not
/// wait for ever for a press that will not come, and a DOWN refused with nothing done is
/// pressed again while its round is open. Against `FakeBuzzerNode`, whose events skip lines
/// on purpose, so the checker is off.
@Suite struct BuzzFailoverTests {
    /// 4 players and a host, both addresses the fake node's (so cluster mode), checked to
    /// have ended well and read no error reply.
    static func buzz(_ node: FakeBuzzerNode, seconds: String) throws -> LoadResult {
        let o = try LoadOptions.parse([
            "buzz", "--hosts", "127.0.0.1:\(node.port),127.0.0.1:\(node.port)", "--connections", "4",
            "--observers", "0", "--duration", seconds, "--warmup", "0", "--no-check",
        ])
        let run = LoadRunner.run(o)
        #expect(run.failure == nil, "\(run.failure ?? "")")
        #expect(run.stats.errors == 0, "\(run.stats.errorSamples)")
        return run
    }

    /// A player that never saw its round's ARMED (its node paused through it) never
    /// presses in it. Before, the host waited for it for the rest of the run: 0 rounds.
    @Test func aRoundMissingAPressIsGivenUpAndTheNextOpens() throws {
        let node = try FakeBuzzerNode(skippedArmeds: 1)
        defer { node.stop() }
        let run = try Self.buzz(node, seconds: "4")
        #expect(run.stats.abandonedRounds == 1, "\(LoadReport.text(run))")
        // The report names the player that never pressed, and what it was doing.
        #expect(run.stats.abandonSamples.count == 1)
        #expect(run.stats.abandonSamples.first?.contains("3 presses, given up: c") == true, "\(run.stats.abandonSamples)")
        #expect(run.stats.abandonSamples.first?.contains("idle, last reply none") == true, "\(run.stats.abandonSamples)")
        #expect(run.stats.rounds > 0, "no round completed after the one given up")
    }

    /// A player whose node resynchronised it past the round's ARMED reads the round in
    /// a snapshot instead: open, and not ranking it, so it presses. Before, it waited
    /// for the next ARMED and the round was given up (nemesis seed 71: "c22 idle, last
    /// DOWN 5.990 s ago").
    @Test func aPlayerResynchronisedPastTheArmedPressesFromTheSnapshot() throws {
        let node = try FakeBuzzerNode(resyncedArmeds: 1)
        defer { node.stop() }
        let run = try Self.buzz(node, seconds: "1.5")
        #expect(run.stats.abandonedRounds == 0, "\(run.stats.abandonSamples)")
        #expect(run.stats.rounds > 0)
    }

    /// A player locked out (its DOWN of the last round met the RESET, and the next ARMED
    /// came within the lockout) presses again once the lockout is over. Before, it
    /// waited for the next ARMED and the round was given up (nemesis seed 75).
    @Test func aPlayerLockedOutPressesAgainAfterTheLockout() throws {
        let node = try FakeBuzzerNode(lockedOutDowns: 2)
        defer { node.stop() }
        let run = try Self.buzz(node, seconds: "1.5")
        #expect(run.stats.earlyDenied >= 2)
        #expect(run.stats.abandonedRounds == 0, "\(run.stats.abandonSamples)")
        #expect(run.stats.rounds > 0)
    }

    /// A player's DOWN answered `ERROR unavailable` with nothing done (its node's lease
    /// lapsed, the leader still deciding): its round stays open, so it presses again.
    /// Before, it waited for the next ARMED, and its round never completed.
    @Test func aDownRefusedUnavailableIsPressedAgainInItsRound() throws {
        let node = try FakeBuzzerNode(unavailableDowns: 3)
        defer { node.stop() }
        let run = try Self.buzz(node, seconds: "1.5")
        #expect(run.stats.unavailable == 3)
        #expect(run.stats.abandonedRounds == 0, "\(LoadReport.text(run))")
        #expect(run.stats.rounds > 0)
    }

    /// Every press gets exactly one answer: a second RANKED to one DOWN is an error of
    /// the run, not taken as the answer to a press never sent.
    @Test func aSecondAnswerToOnePressIsAnError() throws {
        let node = try FakeBuzzerNode(doubledAnswers: 2)
        defer { node.stop() }
        let o = try LoadOptions.parse([
            "buzz", "--port", "\(node.port)", "--connections", "4", "--observers", "0", "--duration", "0.5", "--no-check",
        ])
        let run = LoadRunner.run(o)
        #expect(run.failure == nil, "\(run.failure ?? "")")
        #expect(run.stats.errors == 2, "\(run.stats.errorSamples)")
        #expect(
            run.stats.errorSamples.first?.contains("an answer with no DOWN awaiting one (a second answer?): RANKED load") == true, "\(run.stats.errorSamples)")
        #expect(run.exitCode == 3)
    }
}
