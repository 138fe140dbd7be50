import ArbiterIO
import ArbiterWire
import Glibc

/// What a compacted journal holds, and the crash-safe replacement of the file.
///
/// All a restart needs from a journal is each panel's highest fence and its last records
/// for HISTORY: one `reserve` line per panel (so fences keep rising) followed by the
/// panel's last records, byte for byte. The new file is written beside the old one,
/// synced, and renamed over it, then the directory is synced: a crash at any point
/// leaves either the old journal or the new one, never a mix.
enum JournalCompactor {
    /// The lines of a compacted journal, panels in name order.
    static func lines(reserved: [String: UInt64], tails: [String: [[UInt8]]], keep: Int) -> [[UInt8]] {
        var kept: [[UInt8]] = []
        for panel in Set(reserved.keys).union(tails.keys).sorted() {
            kept.append(reserveLine(panel: panel, upTo: reserved[panel] ?? 0))
            kept += (tails[panel] ?? []).suffix(keep)
        }
        return kept
    }

    static func reserveLine(panel: String, upTo: UInt64) -> [UInt8] {
        var line: [UInt8] = Array(#"{"type":"reserve","panel":"#.utf8)
        JSONString.append(panel, to: &line)
        line += Array(",\"upto\":\(upTo)}".utf8)
        return line
    }

    /// Replaces the journal at `path` with `lines`; returns the new file, open for
    /// appending (opened before the rename, so running out of descriptors can never
    /// leave records going to the replaced file), and its size. A symlinked journal
    /// stays a symlink (the file it points to is replaced) and the new file keeps the
    /// old one's permissions.
    static func replace(path: String, with lines: [[UInt8]]) throws(Sys.Failure) -> (fd: Int32, size: Int) {
        guard let resolved = realpath(path, nil) else { throw Sys.Failure(call: "realpath(\(path))", errno: errno) }
        let target = String(cString: resolved)
        free(resolved)
        var info = stat()
        guard stat(target, &info) == 0 else { throw Sys.Failure(call: "stat(\(target))", errno: errno) }
        let temporary = target + ".compacting"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, info.st_mode & 0o7777)
        guard fd >= 0 else { throw Sys.Failure(call: "open(\(temporary))", errno: errno) }
        _ = fchmod(fd, info.st_mode & 0o7777)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(lines.reduce(0) { $0 + $1.count + 1 })
        for line in lines {
            bytes += line
            bytes.append(0x0A)
        }
        var e = Sys.writeAll(fd, bytes)
        if e == 0, fsync(fd) != 0 { e = errno }
        if e == 0, fcntl(fd, F_SETFL, O_APPEND) != 0 { e = errno }
        if e == 0, rename(temporary, target) != 0 { e = errno }
        guard e == 0 else {
            Glibc.close(fd)
            unlink(temporary)
            throw Sys.Failure(call: "replace(\(target))", errno: e)
        }
        // The rename itself is only durable once the directory is synced.
        let directory = String(target[..<target.lastIndex(of: "/")!])
        let dfd = open(directory.isEmpty ? "/" : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dfd >= 0 {
            _ = fsync(dfd)
            Glibc.close(dfd)
        }
        return (fd, bytes.count)
    }
}
