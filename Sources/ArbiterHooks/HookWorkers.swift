import ArbiterIO
import Dispatch
import Foundation

/// Threads of one hook's own for its blocking attempts: at most `limit` (the hook's
/// attempts at a time), started as needed, ended after `idleSeconds` without work. A
/// receiver that never answers holds these until each attempt's deadline, never a thread
/// of Dispatch's shared pool, which runs the server's timers (a cluster's lease checks
/// among them) and would start more threads only slowly once every one of its is blocked.
final class HookWorkers: @unchecked Sendable {
    struct State {
        var jobs: [@Sendable () -> Void] = []
        var threads = 0
        var busy = 0
    }

    /// Hooks' short timed jobs (an https attempt's deadline, an idle sweep): a serial
    /// queue, which blocked threads of Dispatch's shared pool do not hold up.
    static let timers = DispatchQueue(label: "arbiter.hook.timers")

    let limit: Int
    let idleSeconds: Double
    private let state = Locked(State())
    /// Signalled once per job queued: a waiting thread takes it.
    private let queued = DispatchSemaphore(value: 0)

    /// Told each time a thread ends (tests).
    let ended: (@Sendable () -> Void)?

    init(limit: Int, idleSeconds: Double = 10, ended: (@Sendable () -> Void)? = nil) {
        self.limit = max(1, limit)
        self.idleSeconds = idleSeconds
        self.ended = ended
    }

    /// Threads running, busy or waiting for work (tests).
    var threads: Int { state.withLock { $0.threads } }

    func run(_ job: @escaping @Sendable () -> Void) {
        let start = state.withLock { s -> Bool in
            s.jobs.append(job)
            // Every thread runs a job or takes a queued one: one more only when the jobs
            // outnumber them, if the limit allows (else the job waits for the first to end).
            guard s.jobs.count + s.busy > s.threads, s.threads < limit else { return false }
            s.threads += 1
            return true
        }
        queued.signal()
        if start {
            let thread = Thread { self.work() }
            thread.name = "arbiter.hook"
            thread.start()
        }
    }

    private func work() {
        // Ends once a wait for work times out with nothing queued.
        while true {
            guard queued.wait(timeout: .now() + idleSeconds) == .success else {
                let idle = state.withLock { s -> Bool in
                    // A job queued meanwhile is ours or a waiting thread's to take: wait again.
                    guard s.jobs.isEmpty else { return false }
                    s.threads -= 1
                    return true
                }
                if idle { return ended?() ?? () }
                continue
            }
            let job = state.withLock { s -> @Sendable () -> Void in
                s.busy += 1
                return s.jobs.removeFirst()
            }
            job()
            state.withLock { $0.busy -= 1 }
        }
    }
}
