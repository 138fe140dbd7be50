import ArbiterCore
@testable import ArbiterJournal
@testable import ArbiterServer
import ArbiterTestSupport
import Foundation

/// A disk that fails on demand, put under the journal through `JournalIO`.
final class FaultyDisk: @unchecked Sendable {
    private let lock = NSLock()
    private var writeError: Int32 = 0
    private var syncError: Int32 = 0
    /// Syncs that still succeed before `syncError` applies.
    private var goodSyncs = 0
    private var _writes = 0
    private var _syncs = 0

    /// Writes fail with `e`, after writing part of the bytes (as a disk filling up does).
    func failWrites(_ e: Int32) { lock.withLock { writeError = e } }

    /// fdatasync fails with `e` from the `after`-th call on.
    func failSyncs(_ e: Int32, after: Int = 0) { lock.withLock { (syncError, goodSyncs) = (e, after) } }

    func heal() { lock.withLock { (writeError, syncError) = (0, 0) } }

    /// Calls that reached the disk (failed ones included).
    var writes: Int { lock.withLock { _writes } }
    var syncs: Int { lock.withLock { _syncs } }

    /// A server whose journal at `path` sits on this disk; by default every refused
    /// press may try the disk again at once (`retryMs` 0).
    func server(
        journal path: String, panels: [PanelConfig] = [.demo], retryMs: Int64 = 0, sync: Bool = false
    ) throws -> TestServer {
        try TestServer(panels: panels) {
            $0.journalPath = path
            $0.journalSync = sync
            $0.journalIO = io
            $0.journalRetryMs = retryMs
        }
    }

    var io: JournalIO {
        JournalIO(
            write: { [self] fd, bytes in
                let e = lock.withLock { () -> Int32 in
                    _writes += 1
                    return writeError
                }
                guard e != 0 else { return JournalIO.system.write(fd, bytes) }
                _ = JournalIO.system.write(fd, Array(bytes.prefix(bytes.count / 2)))
                return e
            },
            fdatasync: { [self] fd in
                let e = lock.withLock { () -> Int32 in
                    _syncs += 1
                    if goodSyncs > 0 {
                        goodSyncs -= 1
                        return 0
                    }
                    return syncError
                }
                return e != 0 ? e : JournalIO.system.fdatasync(fd)
            },
            ftruncate: JournalIO.system.ftruncate
        )
    }
}
