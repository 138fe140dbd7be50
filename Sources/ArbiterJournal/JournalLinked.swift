/// A journal file with more than one name (a hard link): the start stops (exit 78).
///
/// The journal's lock is taken by name (`JournalLock`), and it cannot be taken on the
/// file itself, since compaction renames a new file over the journal. A second name for
/// the same file would get a lock of its own, and two servers would hand out the same
/// fences from it; the first compaction would also split the names apart silently.
public struct JournalLinked: Error, CustomStringConvertible {
    public var path: String
    /// The file's link count (`st_nlink`), more than 1.
    public var links: Int

    public var description: String {
        "journal \(path) is one of \(links) names for the same file (a hard link): two servers could each lock it "
            + "under another name and hand out the same fences. Give --journal a file with one name: remove the "
            + "other links, or copy the file (cp) instead of linking it."
    }
}
