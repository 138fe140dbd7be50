import ArbiterIO
import Glibc

/// The exclusive lock on a journal, held for as long as the server runs.
///
/// It is an `flock` on `<journal>.lock`, not on the journal itself: compaction renames a
/// new file over the journal, and a lock on the old file would not cover the new one.
/// The lock file holds the holder's PID, so a second server can name it. The file is
/// left behind on exit; only the `flock` counts, which the kernel drops when the holder
/// dies (also on kill -9), so a stale file never blocks a start.
///
/// A lock by name only excludes every user of the file while the file has one name, so a
/// journal with hard links is refused (`JournalLinked`). Symlinks are resolved instead:
/// they name the file's one name.
public final class JournalLock: @unchecked Sendable {
    let path: String
    private var fd: Int32

    /// Locks the journal at `journalPath` (a symlinked journal is locked at its target,
    /// so two names for one file still exclude each other).
    public init(journalPath: String) throws {
        var target = journalPath
        if let resolved = realpath(journalPath, nil) {
            target = String(cString: resolved)
            free(resolved)
        }
        let lockPath = target + ".lock"
        // The descriptor stays a local until the lock is held: once every stored property
        // is set, a throwing init runs `deinit`, which would close it a second time, and by
        // then the number may belong to another thread's socket.
        let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw Sys.Failure(call: "open(\(lockPath))", errno: errno) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let e = errno
            let holder = Self.readPID(fd)
            Glibc.close(fd)
            if e == EWOULDBLOCK { throw JournalInUse(path: journalPath, lockPath: lockPath, pid: holder) }
            throw Sys.Failure(call: "flock(\(lockPath))", errno: e)
        }
        // After the lock, so that a second server on the journal's own name hears that the
        // journal is in use; one on another name for it gets its own lock and stops here.
        var info = stat()
        if stat(target, &info) == 0, info.st_nlink > 1 {
            Glibc.close(fd)
            throw JournalLinked(path: journalPath, links: Int(info.st_nlink))
        }
        path = lockPath
        self.fd = fd
        let text = Array("\(getpid())\n".utf8)
        _ = Glibc.ftruncate(fd, 0)
        _ = text.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
    }

    private static func readPID(_ fd: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { return nil }
        let digits = buffer[..<n].prefix { $0 >= 0x30 && $0 <= 0x39 }
        return Int32(String(decoding: digits, as: UTF8.self))
    }

    /// Drops the lock: another server may take the journal from here on.
    public func release() {
        guard fd >= 0 else { return }
        Glibc.close(fd)
        fd = -1
    }

    deinit { release() }
}
