import ArbiterCluster
import ArbiterCore
import ArbiterTestSupport
import Foundation
import Testing

@testable import ArbiterClusterServer
@testable import ArbiterServer

/// etcd refusing a leader's fence reservations (at its space quota, the NOSPACE alarm
/// raised): presses past the block in hand are refused with etcd's own reason, not "is
/// reserving its next block" for ever, and work again by themselves once etcd takes writes.
/// Found by hand with a real etcd whose quota was full: the log said nothing. The presses
/// themselves: `EmbeddedTermFencingTests`; here, what the log says.
@Suite("cluster mode: etcd refusing fence reservations", .serialized)
struct ClusterFenceTroubleTests {
    static let noSpace = EtcdError.server(code: 8, message: "etcdserver: mvcc: database space exceeded")

    @Test func theLogSaysItWhenItBeginsEveryThirtySecondsAndWhenItEnds() {
        var known: FenceTrouble?
        #expect(FenceTrouble.note(nil, now: 0, in: &known) == .nothing)
        #expect(FenceTrouble.note("full", now: 1_000, in: &known) == .trouble("full", .error))
        #expect(FenceTrouble.note("full", now: 20_000, in: &known) == .nothing)
        #expect(FenceTrouble.note("full", now: 31_000, in: &known) == .trouble("full", .error))
        #expect(FenceTrouble.note("other", now: 32_000, in: &known) == .trouble("other", .error))
        #expect(FenceTrouble.note(nil, now: 40_000, in: &known) == .recovered(afterMs: 39_000))
        #expect(known == nil)
        #expect(FenceTrouble.hint("etcd error 8: etcdserver: mvcc: database space exceeded").contains("etcdctl alarm disarm"))
    }

    /// etcd not answering is most often over in seconds (nemesis runs saw every one recover
    /// within 1.6-5 s): a warning, and an error only once it has lasted 30 s. A refusal is an
    /// error at once, as above.
    @Test func etcdNotAnsweringIsAWarningUntilItHasLastedThirtySeconds() {
        var known: FenceTrouble?
        #expect(FenceTrouble.note("etcd unavailable: timed out", refused: false, now: 1_000, in: &known) == .trouble("etcd unavailable: timed out", .warning))
        #expect(FenceTrouble.note("etcd unavailable: timed out", refused: false, now: 5_000, in: &known) == .nothing)
        #expect(
            FenceTrouble.note("etcd unavailable: refused", refused: false, now: 6_000, in: &known) == .trouble("etcd unavailable: refused", .warning))
        #expect(
            FenceTrouble.note("etcd unavailable: refused", refused: false, now: 36_000, in: &known) == .trouble("etcd unavailable: refused", .error))
        #expect(FenceTrouble.note(nil, now: 37_000, in: &known) == .recovered(afterMs: 36_000))
        // Not answering, then answering with a refusal: an error at once.
        #expect(FenceTrouble.note("etcd unavailable: timed out", refused: false, now: 40_000, in: &known) == .trouble("etcd unavailable: timed out", .warning))
        #expect(FenceTrouble.note("etcd error 8: full", refused: true, now: 41_000, in: &known) == .trouble("etcd error 8: full", .error))
        #expect(!FenceTrouble.isRefusal(.unavailable("no endpoint answered")))
        #expect(FenceTrouble.isRefusal(Self.noSpace))
        #expect(FenceTrouble.isRefusal(.malformed("fence key holds x")))
    }
}
