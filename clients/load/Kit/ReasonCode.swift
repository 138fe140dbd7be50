/// The `reason=` (or `ended=`) word of a message, as a small code.
public enum ReasonCode: UInt8, Sendable, Equatable {
    case none, up, cancel, timeout, disconnect, fired, reset, shutdown, busy, forbidden, other
    /// Fair groups: DENIED on a full line, before a round, during a lockout; DEQUEUED by LEAVE.
    case queueFull, early, lockedOut, leave
    /// Cluster mode: the panel's leader changed (docs/CLUSTER.md).
    case failover

    public var word: String {
        switch self {
        case .none: "-"
        case .up: "up"
        case .cancel: "cancel"
        case .timeout: "timeout"
        case .disconnect: "disconnect"
        case .fired: "fired"
        case .reset: "reset"
        case .shutdown: "shutdown"
        case .busy: "busy"
        case .forbidden: "forbidden"
        case .failover: "failover"
        case .other: "other"
        case .queueFull: "queue-full"
        case .early: "early"
        case .lockedOut: "locked-out"
        case .leave: "leave"
        }
    }

    /// Decodes the word in `bytes[range]`.
    static func decode(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> ReasonCode {
        let n = range.count
        guard n > 0 else { return .none }
        switch bytes[range.lowerBound] {
        case UInt8(ascii: "u") where ByteText.equals(bytes, range, "up"): return .up
        case UInt8(ascii: "c") where ByteText.equals(bytes, range, "cancel"): return .cancel
        case UInt8(ascii: "t") where ByteText.equals(bytes, range, "timeout"): return .timeout
        case UInt8(ascii: "d") where ByteText.equals(bytes, range, "disconnect"): return .disconnect
        case UInt8(ascii: "f") where ByteText.equals(bytes, range, "fired"): return .fired
        case UInt8(ascii: "f") where ByteText.equals(bytes, range, "forbidden"): return .forbidden
        case UInt8(ascii: "f") where ByteText.equals(bytes, range, "failover"): return .failover
        case UInt8(ascii: "r") where ByteText.equals(bytes, range, "reset"): return .reset
        case UInt8(ascii: "s") where ByteText.equals(bytes, range, "shutdown"): return .shutdown
        case UInt8(ascii: "b") where ByteText.equals(bytes, range, "busy"): return .busy
        case UInt8(ascii: "q") where ByteText.equals(bytes, range, "queue-full"): return .queueFull
        case UInt8(ascii: "e") where ByteText.equals(bytes, range, "early"): return .early
        case UInt8(ascii: "l") where ByteText.equals(bytes, range, "locked-out"): return .lockedOut
        case UInt8(ascii: "l") where ByteText.equals(bytes, range, "leave"): return .leave
        default: return .other
        }
    }
}
