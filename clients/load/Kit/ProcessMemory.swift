import Glibc

/// Reads a process's resident memory from /proc (Linux).
public enum ProcessMemory {
    /// VmRSS of `pid` in bytes, or nil if it cannot be read.
    public static func residentBytes(pid: Int32) -> Int? {
        let fd = open("/proc/\(pid)/status", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { _ = Glibc.close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        // Bounded: /proc status files are a few KiB.
        for _ in 0..<64 {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            bytes += chunk[..<n]
        }
        return parseVmRSS(String(decoding: bytes, as: UTF8.self))
    }

    /// The `VmRSS:   1234 kB` line of a status file, in bytes.
    public static func parseVmRSS(_ status: String) -> Int? {
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let words = line.split(separator: " ", omittingEmptySubsequences: true).map { $0.trimmingPrefix("\t") }
            guard words.count >= 2, let kb = Int(words[1]) else { return nil }
            return kb * 1024
        }
        return nil
    }
}
