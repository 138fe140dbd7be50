import ArbiterWire
import Glibc

/// Shrinks a journal at start, before it is opened for appending: all a restart needs
/// from it is each panel's highest fence and its last records for HISTORY, so a file
/// several times longer than that is rewritten to just that — one `reserve` line per
/// panel (its highest fence, so fences keep rising) followed by the panel's last
/// records, byte for byte. The new file is written beside the old one, synced, and
/// renamed over it, then the directory is synced: a crash at any point leaves either
/// the old journal or the new one, never a mix.
enum JournalCompactor {
    struct Outcome: Equatable {
        var linesBefore: Int
        var linesAfter: Int
    }

    /// Rewrites `path` when it has more than twice the lines worth keeping; nil when it
    /// was left alone.
    static func compact(path: String, loaded: JournalLoader.Loaded, keep: Int) throws(Sys.Failure) -> Outcome? {
        let panels = Set(loaded.lastFences.keys).union(loaded.historyLines.keys).sorted()
        var kept: [[UInt8]] = []
        for panel in panels {
            var reserve: [UInt8] = Array(#"{"type":"reserve","panel":"#.utf8)
            JSONString.append(panel, to: &reserve)
            reserve += Array(",\"upto\":\(loaded.lastFences[panel] ?? 0)}".utf8)
            kept.append(reserve)
            kept += (loaded.historyLines[panel] ?? []).suffix(keep)
        }
        guard loaded.lines > 2 * kept.count, loaded.lines > 100 else { return nil }

        // A symlinked journal stays a symlink: the file it points to is what is replaced,
        // and the new one keeps the old one's permissions.
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
        bytes.reserveCapacity(kept.reduce(0) { $0 + $1.count + 1 })
        for line in kept {
            bytes += line
            bytes.append(0x0A)
        }
        let e = Sys.writeAll(fd, bytes)
        guard e == 0 else {
            Glibc.close(fd)
            unlink(temporary)
            throw Sys.Failure(call: "write(\(temporary))", errno: e)
        }
        guard fsync(fd) == 0 else {
            let e = errno
            Glibc.close(fd)
            unlink(temporary)
            throw Sys.Failure(call: "fsync(\(temporary))", errno: e)
        }
        Glibc.close(fd)
        guard rename(temporary, target) == 0 else {
            let e = errno
            unlink(temporary)
            throw Sys.Failure(call: "rename(\(temporary))", errno: e)
        }
        // The rename itself is only durable once the directory is synced.
        let directory = String(target[..<target.lastIndex(of: "/")!])
        let dfd = open(directory.isEmpty ? "/" : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dfd >= 0 {
            _ = fsync(dfd)
            Glibc.close(dfd)
        }
        return Outcome(linesBefore: loaded.lines, linesAfter: kept.count)
    }
}
