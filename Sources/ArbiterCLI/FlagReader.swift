/// Walks a command line the way `arbiter` and `arbiter-load` both take it: `--flag value`
/// and `--flag=value`, bare words left to the caller, and one wording for what is wrong.
public struct FlagReader {
    public let arguments: [String]
    private var index = 0

    public init(_ arguments: [String]) {
        self.arguments = arguments
    }

    /// The next argument, with `--flag=value` split into its flag and inline value;
    /// nil once every argument has been read.
    public mutating func next() -> (argument: String, flag: String, inline: String?)? {
        guard index < arguments.count else { return nil }
        let argument = arguments[index]
        index += 1
        if argument.hasPrefix("--"), let eq = argument.firstIndex(of: "=") {
            return (argument, String(argument[..<eq]), String(argument[argument.index(after: eq)...]))
        }
        return (argument, argument, nil)
    }

    /// The value of `flag`: its inline value, else the next argument unless that is
    /// another flag (then the value was forgotten, and the flag must not swallow it).
    public mutating func value(_ flag: String, _ inline: String?) throws(UsageError) -> String {
        if let inline { return inline }
        guard index < arguments.count, !arguments[index].hasPrefix("--") else {
            throw UsageError(message: "missing value for \(flag)")
        }
        index += 1
        return arguments[index - 1]
    }

    public static func number(_ flag: String, _ text: String, _ range: ClosedRange<Int>) throws(UsageError) -> Int {
        guard let n = Int(text), range.contains(n) else {
            throw UsageError(message: "\(flag) must be a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'")
        }
        return n
    }

    /// An argument no flag matched, naming the nearest known flag when it looks like a slip.
    public static func unknown(_ argument: String, flag: String, known flags: [String]) -> UsageError {
        let hint = flag.hasPrefix("-") ? closest(flag, among: flags, within: 3).map { "; did you mean \($0)?" } ?? "" : ""
        return UsageError(message: "unknown argument '\(argument)'\(hint)")
    }

    /// The candidate nearest to `word` by edit distance, if at most `within` edits away.
    public static func closest(_ word: String, among candidates: [String], within: Int) -> String? {
        let scored = candidates.map { ($0, distance(Array(word.utf8), Array($0.utf8))) }
        guard let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= within else { return nil }
        return best.0
    }

    private static func distance(_ a: [UInt8], _ b: [UInt8]) -> Int {
        var previous = Array(0...b.count)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...max(b.count, 1) where !b.isEmpty {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return a.isEmpty ? b.count : previous[b.count]
    }
}
