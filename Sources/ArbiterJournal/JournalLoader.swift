import ArbiterIO
import ArbiterWire
import Foundation

/// Reads a journal at start: the highest fence (or reservation) of every panel and its
/// last records for HISTORY.
///
/// Redis's AOF rule: a torn last line (a crash mid-write) is cut off with a warning;
/// any other line the server would not have written stops the start (`JournalDamaged`).
public struct JournalLoader {
    public struct Loaded: Sendable {
        public init() {}
        /// The highest fence of each panel, reserved or handed out: the next one is above.
        public var lastFences: [String: UInt64] = [:]
        /// The highest fence of each panel a record shows handed out.
        public var grantedFences: [String: UInt64] = [:]
        public var history: [String: [HistoryRecord]] = [:]
        /// The journal lines of `history`, as they were read: what compaction keeps.
        public var historyLines: [String: [[UInt8]]] = [:]
        public var records = 0
        /// Non-empty lines read.
        public var lines = 0
        public var warnings: [String] = []
    }

    public static func load(path: String, keep: Int) throws -> Loaded {
        var loaded = Loaded()
        guard let handle = FileHandle(forUpdatingAtPath: path) else {
            // A journal that exists but cannot be read is not an empty one: starting
            // would reset its fences.
            let fd = open(path, O_RDWR | O_CLOEXEC)
            let e = errno
            guard fd < 0, e != ENOENT else {
                if fd >= 0 { close(fd) }
                return loaded
            }
            throw Sys.Failure(call: "open(\(path))", errno: e)
        }
        defer { try? handle.close() }
        let data = (try? handle.readToEnd()) ?? Data()
        let bytes = [UInt8](data)
        var lineStart = 0
        var lineNumber = 0
        for i in bytes.indices where bytes[i] == 0x0A {
            lineNumber += 1
            let line = Array(bytes[lineStart..<i])
            lineStart = i + 1
            // An empty line carries nothing that could be lost.
            if line.isEmpty { continue }
            loaded.lines += 1
            do throws(LineProblem) {
                try read(line, into: &loaded, keep: keep)
            } catch {
                throw JournalDamaged(path: path, line: lineNumber, problem: error.text)
            }
        }
        if lineStart < bytes.count {
            let torn = Array(bytes[lineStart...])
            guard isTornLine(torn) else {
                throw JournalDamaged(path: path, line: lineNumber + 1, problem: describe(torn) ?? "it is not a journal line (and has no line end)")
            }
            // A crash mid-write leaves a line without its newline: drop it so the
            // next record does not get glued to it.
            loaded.warnings.append("journal \(path): the last line (\(bytes.count - lineStart) bytes) is torn; skipped and cut off")
            try? handle.truncate(atOffset: UInt64(lineStart))
        }
        return loaded
    }

    private struct LineProblem: Error {
        var text: String
    }

    /// Whether `bytes`, a last line without its newline, can be the start of a line the
    /// server writes: every line begins `{"type":"` and holds no control bytes.
    static func isTornLine(_ bytes: [UInt8]) -> Bool {
        let start = Array(#"{"type":""#.utf8)
        guard bytes.prefix(start.count).elementsEqual(start.prefix(bytes.count)) else { return false }
        return !bytes.contains { $0 < 0x20 || $0 == 0x7F }
    }

    /// What is recognisably wrong with a line, before any JSON is read.
    private static func describe(_ line: [UInt8]) -> String? {
        if line.starts(with: [0xEF, 0xBB, 0xBF]) { return "it starts with a UTF-8 byte order mark" }
        if line.contains(0) { return "it holds NUL bytes (binary data)" }
        return nil
    }

    private static func read(_ line: [UInt8], into loaded: inout Loaded, keep: Int) throws(LineProblem) {
        if let problem = describe(line) { throw LineProblem(text: problem) }
        let json: JSONValue
        do throws(JSONParser.Failure) {
            json = try JSONParser.parse(line)
        } catch {
            throw LineProblem(text: "it is not JSON (\(error))")
        }
        guard case .object(let members) = json else { throw LineProblem(text: "it is not a JSON object") }
        switch json["type"]?.string {
        case "reserve":
            guard members.count == 3, let panel = json["panel"]?.string else {
                throw LineProblem(text: #"a reserve line has exactly "type", "panel" (a string) and "upto""#)
            }
            guard let upTo = json["upto"]?.unsignedInteger else {
                throw LineProblem(text: "\"upto\" must be a whole number from 0 to \(UInt64.max), not \(shown(json["upto"]))")
            }
            loaded.lastFences[panel] = max(loaded.lastFences[panel] ?? 0, upTo)
        case "record":
            guard let record = HistoryRecord(json: json) else {
                throw LineProblem(text: "it is not a record the server writes (panel, button, event, at and fields of strings, whole numbers and booleans)")
            }
            if let fence = json["fence"], fence.unsignedInteger == nil {
                throw LineProblem(text: "\"fence\" must be a whole number from 0 to \(UInt64.max), not \(shown(fence))")
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
        default:
            throw LineProblem(text: #"its "type" is neither "reserve" nor "record""#)
        }
    }

    private static func shown(_ value: JSONValue?) -> String {
        switch value {
        case .none: "missing"
        case .number(let n)?: n
        case .string(let s)?: "the string \"\(s.prefix(40))\""
        case let v?: v.typeName
        }
    }
}
