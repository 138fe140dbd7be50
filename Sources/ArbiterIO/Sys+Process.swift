import CSystem
import Glibc

extension Sys {
    /// Raises the open-file limit towards `want`, as far as the hard limit allows;
    /// returns the limit in force. Every connection is a descriptor.
    @discardableResult
    public static func raiseFileLimit(to want: Int) -> Int {
        Int(clamping: cs_raise_nofile(UInt64(max(want, 0))))
    }

    /// The whole of a small file such as a /proc entry, at most `limit` bytes; nil when
    /// it cannot be opened or read.
    public static func readSmallFile(_ path: String, limit: Int = 256 * 1024) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < limit {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n > 0 {
                bytes += chunk[..<n]
            } else if n < 0, errno == EINTR {
                continue
            } else if n < 0 {
                return nil
            } else {
                break
            }
        }
        return Array(bytes.prefix(limit))
    }
}
