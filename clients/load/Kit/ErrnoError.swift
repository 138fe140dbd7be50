import Glibc

/// A failed system call, said the way a user reads it.
public struct ErrnoError: Error, Equatable, CustomStringConvertible {
    public var call: String
    public var code: Int32

    public init(call: String, code: Int32) {
        self.call = call
        self.code = code
    }

    /// What went wrong, without the call (`Connection refused`).
    public var reason: String { String(cString: strerror(code)) }

    public var description: String { "\(call): \(reason)" }
}
