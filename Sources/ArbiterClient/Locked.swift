import Foundation

/// A value behind a lock. Not `Synchronization.Mutex`: that needs iOS 18 and macOS 15, and
/// the client is meant for apps that still support older systems.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
