@testable import ArbiterJournal
import ArbiterTestSupport
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

    /// The lock is taken by name, and compaction renames a new file over the journal, so
    /// a second name for the file (a hard link) would get a lock of its own: both servers
    /// then handed out fences 1, 2, 3. A journal with more than one name is refused.
    @Test func aHardLinkToALiveServersJournalIsRefused() throws {
        let journal = NSTemporaryDirectory() + "linked-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).jsonl"
        let link = journal + ".link"
        defer {
            for path in [journal, journal + ".lock", link, link + ".lock"] { unlink(path) }
        }
        let first = try TestServer { $0.journalPath = journal }
        let c = try first.client(name: "a")
        c.send("DOWN demo b1")
        #expect(try c.expect("GRANTED") == "GRANTED demo b1 fence=1")
        #expect(Glibc.link(journal, link) == 0)
        do {
            let second = try TestServer { $0.journalPath = link }
            let d = try second.client(name: "b")
            d.send("DOWN demo b2")
            Issue.record("a second server started on a hard link to a live journal: \(try d.readLine())")
        } catch let linked as JournalLinked {
            #expect(linked.path == link)
            #expect(linked.links == 2)
            #expect(linked.description.hasPrefix("journal \(link) is one of 2 names for the same file (a hard link)"))
        }
        // On the journal's own name the lock answers first.
        #expect(throws: JournalInUse.self) { _ = try TestServer { $0.journalPath = journal } }
        // The first server goes on as before.
        c.send("UP demo b1\nDOWN demo b1")
        #expect(try c.expect("GRANTED") == "GRANTED demo b1 fence=2")
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
