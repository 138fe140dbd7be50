import ArbiterCore
#if canImport(Glibc)
    import Glibc
#endif

/// The runtime's clock: CLOCK_BOOTTIME, which unlike CLOCK_MONOTONIC also counts time the
/// machine spent suspended, so a resumed VM sees the jump and its leaders step down.
public enum BootClock {
    public static func now() -> Instant {
        var ts = timespec()
        #if os(Linux)
            clock_gettime(CLOCK_BOOTTIME, &ts)
        #else
            clock_gettime(CLOCK_MONOTONIC, &ts)
        #endif
        return Instant(milliseconds: Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000)
    }
}
