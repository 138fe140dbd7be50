#if canImport(Glibc)
    import Glibc
#endif

/// Milliseconds on CLOCK_MONOTONIC: deadlines must not move when the wall clock is set.
enum MonotonicClock {
    static func milliseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }
}
