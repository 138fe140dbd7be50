import ArbiterWire
import Glibc

/// The journal file (`--journal`): one JSON line per grant, fire and release, and a
/// fence reservation line before any fence past the last one is used.
///
/// Durability: the records of each command's (or timer's) outcome are written with one
/// `write(2)` before any reply or event of it is queued for a peer, so whatever a client
/// saw survives a crash of this process (kill -9). Against power loss, records are only safe with
/// `journalSync` (fdatasync per batch); fence reservations are always fdatasync'd before
/// a fence they cover is handed out, so fences never go back, even after power loss.
///
/// Size: the journal keeps, beside the file, each panel's highest reservation and last
/// `keep` record lines — all a restart needs. It compacts the file to just those when it
/// opens a file several times longer, and whenever the file grows past `maxBytes`
/// (`JournalCompactor`), so a server that runs for months keeps a bounded file.
final class Journal: @unchecked Sendable {
    let path: String
    let syncRecords: Bool
    private let log: ServerLog
    /// How many fences one reservation covers: one fsync per this many grants.
    static let reservationBlock: UInt64 = 1000
    /// Compact at run time when the file grows past this; 0: only when opened.
    let maxBytes: Int
    let keep: Int

    private struct State {
        var fd: Int32
        /// The descriptor the last compaction replaced: a panel may still be syncing
        /// through it, so it is closed one compaction later.
        var retiredFD: Int32 = -1
        var size: Int
        /// What the file would shrink to (as of the last compaction or the start): a
        /// file compacts only once it is twice that, so many panels' tails above
        /// `maxBytes` cannot make every append compact.
        var compactedSize: Int
        var reserved: [String: UInt64]
        /// Up to 2 × `keep` last record lines per panel (trimmed by halves, not per line).
        var tails: [String: [[UInt8]]]
    }

    private let state: Locked<State>

    /// Opens `path` for appending after `JournalLoader` has read it, and compacts it
    /// first when it holds more than twice what a restart needs.
    init(path: String, syncRecords: Bool, maxBytes: Int, keep: Int, loaded: JournalLoader.Loaded, log: ServerLog) throws(Sys.Failure) {
        self.path = path
        self.syncRecords = syncRecords
        self.maxBytes = maxBytes
        self.keep = keep
        self.log = log
        var initial = State(fd: -1, size: 0, compactedSize: 0, reserved: loaded.lastFences, tails: loaded.historyLines)
        let kept = JournalCompactor.lines(reserved: initial.reserved, tails: initial.tails, keep: keep)
        initial.compactedSize = kept.reduce(0) { $0 + $1.count + 1 }
        if loaded.lines > 2 * kept.count, loaded.lines > 100 {
            do {
                (initial.fd, initial.size) = try JournalCompactor.replace(path: path, with: kept)
                log.info("journal compacted", ["path": path, "lines_before": "\(loaded.lines)", "lines_after": "\(kept.count)"])
            } catch {
                // The old journal is intact: serve with it and say why it stays long.
                log.warning("journal not compacted", ["path": path, "error": "\(error)"])
            }
        }
        if initial.fd < 0 {
            initial.fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
            guard initial.fd >= 0 else { throw Sys.Failure(call: "open(\(path))", errno: errno) }
            var info = stat()
            initial.size = fstat(initial.fd, &info) == 0 ? Int(info.st_size) : 0
        }
        state = Locked(initial)
    }

    deinit {
        state.withLock { s in
            Glibc.close(s.fd)
            if s.retiredFD >= 0 { Glibc.close(s.retiredFD) }
        }
    }

    /// Appends whole record lines of `panel`; called from that panel's queue.
    func append(panel: String, _ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        let fd = state.withLock { s in
            write(bytes, in: &s)
            var start = 0
            for i in bytes.indices where bytes[i] == 0x0A {
                s.tails[panel, default: []].append(Array(bytes[start..<i]))
                start = i + 1
            }
            if s.tails[panel]!.count > 2 * keep { s.tails[panel]!.removeFirst(keep) }
            compactIfLarge(&s)
            return s.fd
        }
        if syncRecords { _ = fdatasync(fd) }
    }

    /// Records that fences of `panel` up to `upTo` may be handed out, durably.
    func reserve(panel: String, upTo: UInt64) {
        let fd = state.withLock { s in
            write(JournalCompactor.reserveLine(panel: panel, upTo: upTo) + [0x0A], in: &s)
            s.reserved[panel] = max(s.reserved[panel] ?? 0, upTo)
            compactIfLarge(&s)
            return s.fd
        }
        // Outside the lock: other panels keep appending meanwhile. A compaction in between
        // already synced a file holding this reservation.
        _ = fdatasync(fd)
    }

    func close() {
        state.withLock { s in _ = fsync(s.fd) }
    }

    private func write(_ bytes: [UInt8], in s: inout State) {
        let e = Sys.writeAll(s.fd, bytes)
        if e != 0 {
            log.error("journal write failed; records may be missing", ["path": path, "errno": "\(e)"])
        }
        s.size += bytes.count
    }

    private func compactIfLarge(_ s: inout State) {
        guard maxBytes > 0, s.size > max(maxBytes, 2 * s.compactedSize) else { return }
        let before = s.size
        do {
            let (fd, after) = try JournalCompactor.replace(path: path, with: JournalCompactor.lines(reserved: s.reserved, tails: s.tails, keep: keep))
            if s.retiredFD >= 0 { Glibc.close(s.retiredFD) }
            s.retiredFD = s.fd
            s.fd = fd
            s.size = after
            s.compactedSize = after
            log.info("journal compacted", ["path": path, "bytes_before": "\(before)", "bytes_after": "\(after)"])
        } catch {
            // Keep appending to the old file; try again once it has doubled.
            s.compactedSize = s.size
            log.warning("journal not compacted", ["path": path, "error": "\(error)"])
        }
    }
}
