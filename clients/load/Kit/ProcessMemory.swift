import ArbiterIO

/// Reads a process's resident memory from /proc (Linux).
public enum ProcessMemory {
    /// VmRSS of `pid` in bytes, or nil if it cannot be read.
    public static func residentBytes(pid: Int32) -> Int? {
        guard let status = Sys.readSmallFile("/proc/\(pid)/status") else { return nil }
        return parseVmRSS(String(decoding: status, as: UTF8.self))
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
