import Glibc

/// A failed system call, said the way a user reads it.
public struct ErrnoError: Error, Equatable, CustomStringConvertible {
    public var call: String
    public var code: Int32

    public init(call: String, code: Int32) {
        self.call = call
        self.code = code
    }

    public var description: String { "\(call): \(String(cString: strerror(code)))" }
}
