/// A journal line the server did not write: the start stops (exit 78) rather than
/// guess, since a line skipped could be the reservation that keeps fences from
/// repeating. Only a torn last line, which a crash mid-write leaves, is cut off.
public struct JournalDamaged: Error, CustomStringConvertible {
    public var path: String
    /// 1-based.
    public var line: Int
    public var problem: String

    public var description: String {
        "journal \(path), line \(line): \(problem). The server did not write this line and will not guess what it meant. "
            + "Restore the journal from a backup, or move it away and start without it "
            + "(fences then start again at 1, and HISTORY is lost)."
    }
}
