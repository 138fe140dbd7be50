import Foundation

/// The last tenth printed, for output that is not a terminal.
final class LockedTenth: @unchecked Sendable {
    private let lock = NSLock()
    private var tenth = -1

    func advance(to next: Int) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard next > tenth else { return false }
        tenth = next
        return true
    }
}
