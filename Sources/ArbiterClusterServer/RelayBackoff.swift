/// When a node may be dialled again: after a failure, `first` ms, doubling per failure
/// up to `max`; a link that comes up starts over. Pure, so its arithmetic is tested
/// without waiting.
struct RelayBackoff: Equatable, Sendable {
    let first: Int64
    let max: Int64
    /// The wait the next failure imposes.
    private(set) var next: Int64
    /// No dial before this (monotonic ms); nil: at once.
    private(set) var notBefore: Int64?

    init(first: Int64, max: Int64) {
        self.first = first
        self.max = Swift.max(first, max)
        self.next = first
    }

    /// Milliseconds still to wait at `now`; 0 when a dial may start.
    func wait(at now: Int64) -> Int64 {
        guard let notBefore, notBefore > now else { return 0 }
        return notBefore - now
    }

    mutating func failed(at now: Int64) {
        notBefore = now + next
        next = Swift.min(next * 2, max)
    }

    mutating func succeeded() {
        next = first
        notBefore = nil
    }
}
