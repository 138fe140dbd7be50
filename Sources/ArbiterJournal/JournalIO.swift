import ArbiterIO
import Glibc

/// The journal's file calls, each returning 0 or an errno: the seam through which tests
/// make the disk fail (ENOSPC, EIO, a failing fdatasync) without a real full disk, or
/// hold a compaction up.
public struct JournalIO: Sendable {
    /// Writes all of the bytes (retrying short writes); may have written a part on failure.
    public var write: @Sendable (Int32, [UInt8]) -> Int32
    public var fdatasync: @Sendable (Int32) -> Int32
    public var ftruncate: @Sendable (Int32, Int) -> Int32
    /// Writes a compaction's snapshot to the new file (the long write, off every panel's path).
    public var writeCompacted: @Sendable (Int32, [UInt8]) -> Int32 = { fd, bytes in Sys.writeAll(fd, bytes) }

    public static let system = JournalIO(
        write: { fd, bytes in Sys.writeAll(fd, bytes) },
        fdatasync: { fd in Glibc.fdatasync(fd) == 0 ? 0 : errno },
        ftruncate: { fd, size in Glibc.ftruncate(fd, off_t(size)) == 0 ? 0 : errno }
    )
}
