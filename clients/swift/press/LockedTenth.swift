import ArbiterLock

/// The last tenth printed, for output that is not a terminal.
final class LockedTenth: Sendable {
    private let tenth = Locked(-1)

    func advance(to next: Int) -> Bool {
        tenth.withLock { tenth in
            guard next > tenth else { return false }
            tenth = next
            return true
        }
    }
}
