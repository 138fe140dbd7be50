import ArbiterWire
import Foundation

/// Reads a journal at start: the highest fence (or reservation) of every panel and its
/// last records for HISTORY. A torn last line (a crash mid-write) is cut off with a
/// warning and damaged lines are skipped: a journal never stops the server starting.
struct JournalLoader {
    struct Loaded {
        /// The highest fence of each panel, reserved or handed out: the next one is above.
        var lastFences: [String: UInt64] = [:]
        /// The highest fence of each panel a record shows handed out.
        var grantedFences: [String: UInt64] = [:]
        var history: [String: [HistoryRecord]] = [:]
        /// The journal lines of `history`, as they were read: what compaction keeps.
        var historyLines: [String: [[UInt8]]] = [:]
        var records = 0
        /// Non-empty lines read, good or not.
        var lines = 0
        var warnings: [String] = []
    }

    static func load(path: String, keep: Int) -> Loaded {
        var loaded = Loaded()
        guard let handle = FileHandle(forUpdatingAtPath: path) else { return loaded }
        defer { try? handle.close() }
        let data = (try? handle.readToEnd()) ?? Data()
        let bytes = [UInt8](data)
        var lineStart = 0
        var lineNumber = 0
        for i in bytes.indices where bytes[i] == 0x0A {
            lineNumber += 1
            let line = Array(bytes[lineStart..<i])
            lineStart = i + 1
            if line.isEmpty { continue }
            loaded.lines += 1
            read(line, number: lineNumber, into: &loaded, keep: keep)
        }
        if lineStart < bytes.count {
            // A crash mid-write leaves a line without its newline: drop it so the
            // next record does not get glued to it.
            loaded.warnings.append("journal \(path): the last line (\(bytes.count - lineStart) bytes) is torn; skipped and cut off")
            try? handle.truncate(atOffset: UInt64(lineStart))
        }
        return loaded
    }

    private static func read(_ line: [UInt8], number: Int, into loaded: inout Loaded, keep: Int) {
        guard let json = try? JSONParser.parse(line) else {
            loaded.warnings.append("journal line \(number) is not valid JSON; skipped")
            return
        }
        if json["type"]?.string == "reserve", let panel = json["panel"]?.string, let upTo = json["upto"]?.integer, upTo >= 0 {
            loaded.lastFences[panel] = max(loaded.lastFences[panel] ?? 0, UInt64(upTo))
            return
        }
        guard let record = HistoryRecord(json: json) else {
            loaded.warnings.append("journal line \(number) is not a record; skipped")
            return
        }
        loaded.records += 1
        if let fence = record.fence {
            loaded.lastFences[record.panel] = max(loaded.lastFences[record.panel] ?? 0, fence)
            loaded.grantedFences[record.panel] = max(loaded.grantedFences[record.panel] ?? 0, fence)
        }
        loaded.history[record.panel, default: []].append(record)
        loaded.historyLines[record.panel, default: []].append(line)
        if loaded.history[record.panel]!.count > 2 * keep {
            loaded.history[record.panel]!.removeFirst(keep)
            loaded.historyLines[record.panel]!.removeFirst(keep)
        }
    }
}
