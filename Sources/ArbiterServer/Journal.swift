import ArbiterWire
import Glibc

/// The append-only journal file (`--journal`): one JSON line per grant, fire and
/// release, and a fence reservation line before any fence past the last one is used.
///
/// Durability: the records of each command's (or timer's) outcome are written with one
/// `write(2)` before any reply or event of it is queued for a peer, so whatever a client
/// saw survives a crash of this process (kill -9). Against power loss, records are only safe with
/// `journalSync` (fdatasync per batch); fence reservations are always fdatasync'd before
/// a fence they cover is handed out, so fences never go back, even after power loss.
/// One descriptor is shared by every panel queue: with O_APPEND each write lands whole.
final class Journal: @unchecked Sendable {
    let path: String
    private let fd: Int32
    let syncRecords: Bool
    private let log: ServerLog
    /// How many fences one reservation covers: one fsync per this many grants.
    static let reservationBlock: UInt64 = 1000

    init(path: String, syncRecords: Bool, log: ServerLog) throws(Sys.Failure) {
        self.path = path
        self.syncRecords = syncRecords
        self.log = log
        fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw Sys.Failure(call: "open(\(path))", errno: errno) }
    }

    deinit { Glibc.close(fd) }

    /// Appends whole lines; called from a panel's queue.
    func append(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        write(bytes)
        if syncRecords { _ = fdatasync(fd) }
    }

    /// Records that fences of `panel` up to `upTo` may be handed out, durably.
    func reserve(panel: String, upTo: UInt64) {
        var line: [UInt8] = Array(#"{"type":"reserve","panel":"#.utf8)
        JSONString.append(panel, to: &line)
        line += Array(",\"upto\":\(upTo)}\n".utf8)
        write(line)
        _ = fdatasync(fd)
    }

    func close() {
        _ = fsync(fd)
    }

    private func write(_ bytes: [UInt8]) {
        let e = Sys.writeAll(fd, bytes)
        if e != 0 {
            log.error("journal write failed; records may be missing", ["path": path, "errno": "\(e)"])
        }
    }
}
