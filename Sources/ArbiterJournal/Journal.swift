import ArbiterIO
import ArbiterWire
import Dispatch
import Glibc
import Synchronization

/// The journal file (`--journal`): one JSON line per grant, fire and release, and a
/// fence reservation line before any fence past the last one is used.
///
/// Durability: the records of each command's (or timer's) outcome are written with one
/// `write(2)` before any reply or event of it is queued for a peer, so whatever a client
/// saw survives a crash of this process (kill -9). Against power loss, records are only safe with
/// `journalSync` (fdatasync per batch); fence reservations are always fdatasync'd before
/// a fence they cover is handed out, so fences never go back, even after power loss.
///
/// A disk that fails (full, or an I/O error, or a failing fdatasync) never makes fences
/// repeat: a reservation that is not durable is not used, and the press that needed it is
/// refused (`ERROR unavailable`); see `JournalHealth` for how the journal recovers.
/// A write that fails is cut back off the file, so a full disk leaves no torn line in
/// the middle of the journal.
///
/// Size: the journal keeps, beside the file, each panel's highest reservation and last
/// `keep` record lines — all a restart needs. It compacts the file to just those when it
/// opens a file several times longer, and whenever the file grows past `maxBytes`
/// (`JournalCompactor`), so a server that runs for months keeps a bounded file.
///
/// A compaction at run time never holds up a press: the new file is written and synced
/// on its own queue from a snapshot, while every panel keeps appending to the old file.
/// The lines appended meanwhile are copied after the snapshot, and only the last few of
/// them, the rename and the switch of descriptors happen under the lock (see `compact`).
public final class Journal: @unchecked Sendable {
    public let path: String
    let syncRecords: Bool
    private let log: ServerLog
    private let io: JournalIO
    /// How many fences one reservation covers: one fsync per this many grants.
    public static let reservationBlock: UInt64 = 1000
    /// Compact at run time when the file grows past this; 0: only when opened.
    let maxBytes: Int
    let keep: Int
    /// Presses refused because the journal could not be written (for /metrics).
    public let refusals = Atomic<Int>(0)
    /// Held until `close`: no second server hands out this journal's fences.
    private let lock: JournalLock?

    private struct State {
        var fd: Int32
        /// Descriptors compactions replaced, closed once no reservation is syncing
        /// outside the lock (it may be syncing through one of them).
        var retiredFDs: [Int32] = []
        var syncsOutsideLock = 0
        var size: Int
        /// Lines appended since the running compaction's snapshot (nil: none runs); the
        /// compaction copies them into the new file.
        var sinceSnapshot: [UInt8]?
        /// Whether `sinceSnapshot` holds a line its writer synced: the new file must be
        /// synced too before it is renamed over the old one.
        var sinceSnapshotNeedsSync = false
        /// What the file would shrink to (as of the last compaction or the start): a
        /// file compacts only once it is twice that, so many panels' tails above
        /// `maxBytes` cannot make every append compact.
        var compactedSize: Int
        var reserved: [String: UInt64]
        /// Up to 2 × `keep` last record lines per panel (trimmed by halves, not per line).
        var tails: [String: [[UInt8]]]
        var health: JournalHealth
    }

    private let state: Locked<State>

    /// Opens `path` for appending after `JournalLoader` has read it, and compacts it
    /// first when it holds more than twice what a restart needs.
    public init(
        path: String, syncRecords: Bool, maxBytes: Int, keep: Int, loaded: JournalLoader.Loaded, log: ServerLog,
        io: JournalIO = .system, retryIntervalMs: Int64 = 1000, lock: JournalLock? = nil
    ) throws(Sys.Failure) {
        self.path = path
        self.syncRecords = syncRecords
        self.maxBytes = maxBytes
        self.keep = keep
        self.log = log
        self.io = io
        self.lock = lock
        var initial = State(
            fd: -1, size: 0, compactedSize: 0, reserved: loaded.lastFences, tails: loaded.historyLines,
            health: JournalHealth(retryIntervalMs: retryIntervalMs))
        let kept = JournalCompactor.lines(reserved: initial.reserved, tails: initial.tails, keep: keep)
        initial.compactedSize = kept.reduce(0) { $0 + $1.count + 1 }
        if loaded.lines > 2 * kept.count, loaded.lines > 100 {
            do {
                (initial.fd, initial.size) = try JournalCompactor.replace(path: path, with: kept, io: io)
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
            for fd in s.retiredFDs { Glibc.close(fd) }
        }
    }

    /// Where run-time compactions run, one at a time.
    private let compactionQueue = DispatchQueue(label: "arbiter.journal.compaction")

    /// Whether the last write or sync worked (or the disk has worked again since).
    public var isHealthy: Bool { state.withLock { $0.health.isHealthy } }

    /// Whether a press may go ahead and try the disk now: always while the journal is
    /// healthy; while it is not, one press per retry interval (the others are refused
    /// without touching the disk).
    public func admitsPress(nowMs: Int64) -> Bool {
        state.withLock { $0.health.admits(nowMs: nowMs) }
    }

    /// A press was refused because the journal could not be written.
    public func noteRefusal() {
        refusals.add(1, ordering: .relaxed)
        state.withLock { $0.health.noteRefusal() }
    }

    /// What is wrong, for the refusal's message.
    public var failureText: String {
        let e = state.withLock { $0.health.failure } ?? EIO
        return String(cString: strerror(e))
    }

    /// Appends whole record lines of `panel`; called from that panel's queue. False if
    /// they could not be written (or, with `syncRecords`, synced): they are then cut
    /// back off the file, and the caller decides whether what they record still stands.
    @discardableResult
    public func append(panel: String, _ bytes: [UInt8]) -> Bool {
        guard !bytes.isEmpty else { return true }
        return state.withLock { s in
            let start = s.size
            var e = io.write(s.fd, bytes)
            var syncFailed = false
            let sync = syncRecords || s.health.needsSync
            // In the lock, unlike a reservation's sync: a failed sync cuts these lines
            // back off, which must not take another panel's lines written after them.
            if e == 0, sync {
                e = io.fdatasync(s.fd)
                syncFailed = e != 0
            }
            if e != 0 {
                cutBack(to: start, in: &s)
                fail(e, sync: syncFailed, in: &s)
                return false
            }
            s.size += bytes.count
            noteAppended(bytes, synced: sync, in: &s)
            var lineStart = 0
            for i in bytes.indices where bytes[i] == 0x0A {
                s.tails[panel, default: []].append(Array(bytes[lineStart..<i]))
                lineStart = i + 1
            }
            if s.tails[panel]!.count > 2 * keep { s.tails[panel]!.removeFirst(keep) }
            succeed(synced: sync, in: &s)
            compactIfLarge(&s)
            return true
        }
    }

    /// Records, durably, that fences of `panel` up to `upTo` may be handed out. False if
    /// the reservation could not be written and synced: then no fence of it may be used.
    public func reserve(panel: String, upTo: UInt64) -> Bool {
        let fd: Int32? = state.withLock { s in
            let start = s.size
            let line = JournalCompactor.reserveLine(panel: panel, upTo: upTo) + [0x0A]
            let e = io.write(s.fd, line)
            guard e == 0 else {
                cutBack(to: start, in: &s)
                fail(e, sync: false, in: &s)
                return nil
            }
            s.size += line.count
            s.reserved[panel] = max(s.reserved[panel] ?? 0, upTo)
            noteAppended(line, synced: true, in: &s)
            compactIfLarge(&s)
            s.syncsOutsideLock += 1
            return s.fd
        }
        guard let fd else { return false }
        // Outside the lock: other panels keep appending meanwhile. A compaction in between
        // already synced a file holding this reservation. A line whose sync failed stays:
        // it may reach the disk or not, and either way no fence of it is handed out.
        let e = io.fdatasync(fd)
        return state.withLock { s in
            s.syncsOutsideLock -= 1
            closeRetired(&s)
            if e != 0 {
                fail(e, sync: true, in: &s)
                return false
            }
            succeed(synced: true, in: &s)
            return true
        }
    }

    public func close() {
        // A compaction under way finishes (or gives up) first: its file may be the journal.
        compactionQueue.sync {}
        state.withLock { s in _ = fsync(s.fd) }
        lock?.release()
    }

    /// Removes what a failed write may have left, so a full disk never leaves a torn
    /// line in the middle of the journal (which would stop the next start).
    private func cutBack(to size: Int, in s: inout State) {
        let e = io.ftruncate(s.fd, size)
        if e != 0 {
            log.error("journal could not be cut back after a failed write", ["path": path, "error": String(cString: strerror(e))])
        }
    }

    private func fail(_ e: Int32, sync: Bool, in s: inout State) {
        if s.health.fail(errno: e, sync: sync, nowMs: SystemClock.monotonic.milliseconds()) {
            log.error(
                "journal unavailable; refusing presses until it can be written again",
                ["path": path, "error": String(cString: strerror(e)), "call": sync ? "fdatasync" : "write"])
        }
    }

    private func succeed(synced: Bool, in s: inout State) {
        let refused = s.health.refusedInEpisode
        let started = s.health.startedMs
        if s.health.succeed(synced: synced) {
            log.warning(
                "journal available again",
                [
                    "path": path, "refused": "\(refused)",
                    "lasted_ms": "\(SystemClock.monotonic.milliseconds() - started)",
                ])
        }
    }

    /// Keeps what a running compaction's snapshot does not have.
    private func noteAppended(_ bytes: [UInt8], synced: Bool, in s: inout State) {
        guard s.sinceSnapshot != nil else { return }
        s.sinceSnapshot! += bytes
        s.sinceSnapshotNeedsSync = s.sinceSnapshotNeedsSync || synced
    }

    private func closeRetired(_ s: inout State) {
        guard s.syncsOutsideLock == 0 else { return }
        for fd in s.retiredFDs { Glibc.close(fd) }
        s.retiredFDs.removeAll()
    }

    /// Starts a compaction on its own queue when the file has grown enough. Only the
    /// snapshot of what to keep is taken under the lock.
    private func compactIfLarge(_ s: inout State) {
        guard maxBytes > 0, s.sinceSnapshot == nil, s.size > max(maxBytes, 2 * s.compactedSize) else { return }
        let lines = JournalCompactor.lines(reserved: s.reserved, tails: s.tails, keep: keep)
        s.sinceSnapshot = []
        s.sinceSnapshotNeedsSync = false
        let before = s.size
        compactionQueue.async { [self] in compact(lines, before: before) }
    }

    /// Writes and syncs the snapshot, then copies what was appended meanwhile: first
    /// outside the lock (synced too), then under it only the last lines, the rename and
    /// the switch, so the lock is never held for the long write or, unless a line
    /// appended in that short window was synced by its writer, for a sync.
    private func compact(_ lines: [[UInt8]], before: Int) {
        var replacement: JournalReplacement
        do throws(Sys.Failure) {
            replacement = try JournalReplacement(path: path, lines: lines, io: io)
        } catch {
            return giveUp(error)
        }
        do throws(Sys.Failure) {
            for _ in 0..<2 {
                let caughtUp = state.withLock { s in
                    defer { (s.sinceSnapshot, s.sinceSnapshotNeedsSync) = ([], false) }
                    return s.sinceSnapshot ?? []
                }
                if caughtUp.isEmpty { break }
                try replacement.append(caughtUp)
            }
            try replacement.sync()
        } catch {
            replacement.abandon()
            return giveUp(error)
        }
        let failure: Sys.Failure? = state.withLock { s in
            do throws(Sys.Failure) {
                try replacement.append(s.sinceSnapshot ?? [])
                if s.sinceSnapshotNeedsSync { try replacement.sync() }
                try replacement.install()
            } catch {
                return error
            }
            s.retiredFDs.append(s.fd)
            s.fd = replacement.fd
            s.size = replacement.size
            // Not the new size: lines appended during a slow compaction are all kept, and
            // the next one must not wait for the file to double past them.
            s.compactedSize = replacement.compactedSize
            s.sinceSnapshot = nil
            closeRetired(&s)
            return nil
        }
        if let failure {
            replacement.abandon()
            return giveUp(failure)
        }
        // Only lines nobody synced may be unsynced in the new file; sync them now anyway,
        // and make the rename durable.
        _ = io.fdatasync(replacement.fd)
        replacement.syncDirectory()
        log.info("journal compacted", ["path": path, "bytes_before": "\(before)", "bytes_after": "\(replacement.size)"])
    }

    /// Keeps appending to the old file; tries again once it has doubled.
    private func giveUp(_ error: Sys.Failure) {
        state.withLock { s in
            s.sinceSnapshot = nil
            s.compactedSize = s.size
        }
        log.warning("journal not compacted", ["path": path, "error": "\(error)"])
    }
}
