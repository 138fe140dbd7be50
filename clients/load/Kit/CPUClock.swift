import ArbiterIO
import Glibc

/// CPU time spent by this process and by the server, to show who the bottleneck is:
/// on a small machine the generator competes with the server for the same cores.
public enum CPUClock {
    /// User + system CPU seconds of this process (all threads).
    public static func ownSeconds() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// User + system CPU seconds of `pid` from /proc/<pid>/stat, or nil.
    public static func processSeconds(pid: Int32) -> Double? {
        guard let stat = Sys.readSmallFile("/proc/\(pid)/stat"), !stat.isEmpty else { return nil }
        return parseStat(String(decoding: stat, as: UTF8.self), ticksPerSecond: Double(sysconf(Int32(_SC_CLK_TCK))))
    }

    /// utime + stime (fields 14 and 15) of a stat line; the command name in parentheses
    /// may hold spaces, so fields are counted after its closing parenthesis.
    public static func parseStat(_ stat: String, ticksPerSecond: Double) -> Double? {
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // fields[0] is field 3 (state), so field 14 is fields[11].
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]), ticksPerSecond > 0 else { return nil }
        return (user + system) / ticksPerSecond
    }

    private static func seconds(_ t: timeval) -> Double {
        Double(t.tv_sec) + Double(t.tv_usec) / 1e6
    }
}
