import Dispatch
import Testing

@testable import ArbiterHooks

/// A hook's own threads: as many as its attempts at a time, no more, none once idle.
@Suite struct HookWorkersTests {
    @Test func runsUpToItsLimitAtOnceAndQueuesTheRest() {
        let workers = HookWorkers(limit: 2)
        let gate = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let job: @Sendable () -> Void = {
            started.signal()
            gate.wait()
            finished.signal()
        }
        workers.run(job)
        workers.run(job)
        #expect(started.wait(timeout: .now() + 10) == .success)
        #expect(started.wait(timeout: .now() + 10) == .success, "two blocked jobs run at once")
        workers.run(job)
        #expect(workers.threads == 2, "a third job waits for a thread instead of starting one")
        for _ in 0..<3 { gate.signal() }
        #expect(started.wait(timeout: .now() + 10) == .success, "the queued job runs once a thread is free")
        for _ in 0..<3 { #expect(finished.wait(timeout: .now() + 10) == .success) }
    }

    @Test func threadsEndWhenIdleAndComeBackForWork() {
        let ends = DispatchSemaphore(value: 0)
        let workers = HookWorkers(limit: 2, idleSeconds: 0.01) { ends.signal() }
        let done = DispatchSemaphore(value: 0)
        workers.run { done.signal() }
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(ends.wait(timeout: .now() + 10) == .success, "the idle thread ended")
        #expect(workers.threads == 0)
        workers.run { done.signal() }
        #expect(done.wait(timeout: .now() + 10) == .success, "a new thread for new work")
    }
}
