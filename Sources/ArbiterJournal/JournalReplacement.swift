import ArbiterIO
import Glibc

/// A compacted journal being written beside the live one, until it is renamed over it.
///
/// It is open for appending from the start (so running out of descriptors can never
/// leave records going to the replaced file), and takes the lines the live journal
/// gets meanwhile (`append`) before `install` renames it into place. A symlinked
/// journal stays a symlink (the file it points to is replaced) and the new file keeps
/// the old one's permissions.
struct JournalReplacement {
    let fd: Int32
    private(set) var size: Int
    /// The size of the compacted lines alone: what the file would shrink to.
    private(set) var compactedSize = 0
    private let target: String
    private let temporary: String
    private let io: JournalIO

    /// Writes `lines` to the new file and syncs it.
    init(path: String, lines: [[UInt8]], io: JournalIO) throws(Sys.Failure) {
        guard let resolved = realpath(path, nil) else { throw Sys.Failure(call: "realpath(\(path))", errno: errno) }
        target = String(cString: resolved)
        free(resolved)
        temporary = target + ".compacting"
        self.io = io
        var info = stat()
        guard stat(target, &info) == 0 else { throw Sys.Failure(call: "stat(\(target))", errno: errno) }
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, info.st_mode & 0o7777)
        guard fd >= 0 else { throw Sys.Failure(call: "open(\(temporary))", errno: errno) }
        self.fd = fd
        _ = fchmod(fd, info.st_mode & 0o7777)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(lines.reduce(0) { $0 + $1.count + 1 })
        for line in lines {
            bytes += line
            bytes.append(0x0A)
        }
        size = 0
        var e = io.writeCompacted(fd, bytes)
        if e == 0, fsync(fd) != 0 { e = errno }
        if e == 0, fcntl(fd, F_SETFL, O_APPEND) != 0 { e = errno }
        guard e == 0 else {
            abandon()
            throw Sys.Failure(call: "compact(\(target))", errno: e)
        }
        size = bytes.count
        compactedSize = bytes.count
    }

    /// Adds lines the live journal took after the snapshot this file was written from.
    mutating func append(_ bytes: [UInt8]) throws(Sys.Failure) {
        guard !bytes.isEmpty else { return }
        let e = io.write(fd, bytes)
        guard e == 0 else { throw Sys.Failure(call: "compact(\(target))", errno: e) }
        size += bytes.count
    }

    /// Syncs what was appended, so the rename never needs a sync under the journal's lock.
    func sync() throws(Sys.Failure) {
        let e = io.fdatasync(fd)
        guard e == 0 else { throw Sys.Failure(call: "compact(\(target))", errno: e) }
    }

    /// Renames the new file over the journal; its descriptor now appends to the journal.
    func install() throws(Sys.Failure) {
        guard rename(temporary, target) == 0 else { throw Sys.Failure(call: "rename(\(temporary))", errno: errno) }
    }

    /// Makes the rename durable.
    func syncDirectory() {
        let directory = String(target[..<(target.lastIndex(of: "/") ?? target.startIndex)])
        let dfd = open(directory.isEmpty ? "/" : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dfd >= 0 {
            _ = fsync(dfd)
            Glibc.close(dfd)
        }
    }

    /// Drops the new file; the live journal stays as it is.
    func abandon() {
        Glibc.close(fd)
        unlink(temporary)
    }
}
