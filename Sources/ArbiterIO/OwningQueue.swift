import Dispatch

/// A serial queue that knows when it is running: `check` traps, in release builds too, when
/// its caller is on another queue. `dispatchPrecondition(.onQueue)` does that in debug
/// builds only; this is for state off the press path (the cluster's lease and control
/// queues, a few runs a second), where a check is one `dispatch_get_specific`.
public final class OwningQueue: @unchecked Sendable {
    public let queue: DispatchQueue
    private let key = DispatchSpecificKey<UInt8>()

    public init(label: String) {
        queue = DispatchQueue(label: label)
        queue.setSpecific(key: key, value: 1)
    }

    /// Whether the caller runs on this queue (or inside a `sync` onto it).
    public var isCurrent: Bool { DispatchQueue.getSpecific(key: key) != nil }

    /// Traps unless the caller runs on this queue: `what` names the state or the step.
    public func check(_ what: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line) {
        precondition(isCurrent, "\(what()) belongs to \(queue.label); called from another queue", file: file, line: line)
    }
}
