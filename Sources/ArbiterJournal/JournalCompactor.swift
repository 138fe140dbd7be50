import ArbiterIO
import ArbiterWire
import Glibc

/// What a compacted journal holds, and the crash-safe replacement of the file.
///
/// All a restart needs from a journal is each panel's highest fence and its last records
/// for HISTORY: one `reserve` line per panel (so fences keep rising) followed by the
/// panel's last records, byte for byte. The new file is written beside the old one
/// (`JournalReplacement`), synced, and renamed over it, then the directory is synced: a
/// crash at any point leaves either the old journal or the new one, never a mix.
enum JournalCompactor {
    /// The lines of a compacted journal, panels in name order.
    static func lines(reserved: [String: UInt64], tails: [String: [[UInt8]]], keep: Int) -> [[UInt8]] {
        var kept: [[UInt8]] = []
        for panel in Set(reserved.keys).union(tails.keys).sorted() {
            kept.append(reserveLine(panel: panel, upTo: reserved[panel] ?? 0))
            kept += (tails[panel] ?? []).suffix(keep)
        }
        return kept
    }

    static func reserveLine(panel: String, upTo: UInt64) -> [UInt8] {
        var line: [UInt8] = Array(#"{"type":"reserve","panel":"#.utf8)
        JSONString.append(panel, to: &line)
        line += Array(",\"upto\":\(upTo)}".utf8)
        return line
    }

    /// Replaces the journal at `path` with `lines` in one go (at start, before anything
    /// else writes to it); returns the new file, open for appending, and its size.
    static func replace(path: String, with lines: [[UInt8]], io: JournalIO = .system) throws(Sys.Failure) -> (fd: Int32, size: Int) {
        let replacement = try JournalReplacement(path: path, lines: lines, io: io)
        do {
            try replacement.install()
        } catch {
            replacement.abandon()
            throw error
        }
        replacement.syncDirectory()
        return (replacement.fd, replacement.size)
    }
}
