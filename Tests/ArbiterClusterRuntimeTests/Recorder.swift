import ArbiterCluster
import ArbiterClusterRuntime
import ArbiterCore
import ArbiterIO
import Foundation
import ArbiterClusterTestSupport

/// Records every callback of one runtime, in order, with the instant it came.
final class Recorder: @unchecked Sendable {
    enum Event: Equatable {
        case became(String, term: Int64, floor: UInt64)
        case extended(String, FenceBlock)
        case stopped(String, term: Int64, StepDownReason)
        case leader(String, node: String?, address: String?, term: Int64?)
    }

    private let lock = NSLock()
    private var recorded: [(Instant, Event)] = []

    var events: [Event] { lock.lock(); defer { lock.unlock() }; return recorded.map(\.1) }
    var timed: [(Instant, Event)] { lock.lock(); defer { lock.unlock() }; return recorded }

    private func add(_ e: Event) {
        lock.lock()
        recorded.append((Instant(milliseconds: SystemClock.boot.milliseconds()), e))
        lock.unlock()
        // The runtime changed its state just before it called back.
        Changes.bump()
    }

    var callbacks: ClusterRuntimeCallbacks {
        ClusterRuntimeCallbacks(
            becameLeader: { [self] p, t, f, _ in add(.became(p, term: t, floor: f)) },
            fencesExtended: { [self] p, b in add(.extended(p, b)) },
            stopDeciding: { [self] p, t, r in add(.stopped(p, term: t, r)) },
            leaderChanged: { [self] p, n, a, t in add(.leader(p, node: n, address: a, term: t)) })
    }
}
