import Foundation
import Glibc
import Testing

@testable import ArbiterServer

@Suite("journal lock")
struct JournalLockTests {
    /// A refused lock closes its descriptor once. A second close would land on whatever
    /// another thread opened under that number in between (CI saw test sockets die with
    /// EBADF this way), so another thread keeps opening descriptors and checks that each
    /// is still its own while refusals run.
    @Test func aRefusedLockClosesItsDescriptorOnlyOnce() throws {
        let journal = NSTemporaryDirectory() + "lock-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).jsonl"
        defer {
            unlink(journal)
            unlink(journal + ".lock")
        }
        let held = try JournalLock(journalPath: journal)
        defer { held.release() }
        let done = Atomic(false)
        let refusals = DispatchQueue(label: "refusals")
        let finished = DispatchSemaphore(value: 0)
        refusals.async {
            for _ in 0..<3_000 { _ = try? JournalLock(journalPath: journal) }
            done.set(true)
            finished.signal()
        }
        var stolen = 0
        var rounds = 0
        while !done.get() && rounds < 200_000 {
            rounds += 1
            var ends: [Int32] = [0, 0]
            guard pipe(&ends) == 0 else { continue }
            if fcntl(ends[0], F_GETFD) < 0 { stolen += 1 }
            if fcntl(ends[1], F_GETFD) < 0 { stolen += 1 }
            close(ends[0])
            close(ends[1])
        }
        finished.wait()
        #expect(stolen == 0, "another thread's descriptors were closed under it \(stolen) times")
    }
}

/// A flag two threads share.
private final class Atomic: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Bool
    init(_ value: Bool) { self.value = value }
    func get() -> Bool { lock.withLock { value } }
    func set(_ v: Bool) { lock.withLock { value = v } }
}
