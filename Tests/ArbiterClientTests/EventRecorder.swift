import ArbiterClient
import Foundation

/// Everything a panel's event stream delivers, and bounded waits for the next event that
/// matches: a test waits on events, never on the clock. The bound is generous: the whole
/// suite in parallel keeps a 2-core machine's cooperative threads busy with blocking tests
/// for tens of seconds, and the stream's reader is a task that waits for one of them.
final class EventRecorder: @unchecked Sendable {
    struct Timeout: Error, CustomStringConvertible {
        let description: String
    }

    private let lock = NSLock()
    private var events: [PanelEvent] = []
    /// Where the next `expect` starts looking.
    private var cursor = 0
    private var waiter: (token: Int, predicate: (PanelEvent) -> Bool, continuation: CheckedContinuation<PanelEvent, any Error>)?
    private var tokens = 0
    private var task: Task<Void, Never>?

    init(_ stream: AsyncStream<PanelEvent>) {
        task = Task { [weak self] in
            for await event in stream { self?.append(event) }
        }
    }

    deinit { task?.cancel() }

    var all: [PanelEvent] {
        lock.lock()
        defer { lock.unlock() }
        return events
    }

    private func append(_ event: PanelEvent) {
        lock.lock()
        events.append(event)
        var resume: CheckedContinuation<PanelEvent, any Error>?
        if let waiter, waiter.predicate(event) {
            cursor = events.count
            resume = waiter.continuation
            self.waiter = nil
        }
        lock.unlock()
        resume?.resume(returning: event)
    }

    /// The first event from the cursor on that `predicate` accepts, waiting at most
    /// `timeout` seconds for it; the cursor moves past it.
    @discardableResult
    func expect(_ what: String, timeout: Double = 60, _ predicate: @escaping @Sendable (PanelEvent) -> Bool) async throws -> PanelEvent {
        try await withCheckedThrowingContinuation { continuation in
            lock.lock()
            if let index = events[cursor...].firstIndex(where: predicate) {
                cursor = index + 1
                lock.unlock()
                return continuation.resume(returning: events[index])
            }
            cursor = events.count
            tokens += 1
            let token = tokens
            waiter = (token, predicate, continuation)
            lock.unlock()
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [weak self] in
                guard let self else { return }
                self.lock.lock()
                // Only this wait's own waiter: an earlier one's timer must not end a later wait.
                let late = self.waiter?.token == token ? self.waiter : nil
                if late != nil { self.waiter = nil }
                let seen = self.events.suffix(8).map(\.description)
                self.lock.unlock()
                late?.continuation.resume(throwing: Timeout(description: "no \(what) within \(timeout) s; last events: \(seen)"))
            }
        }
    }
}
