import ArbiterCore

/// The verbs, their arguments and options: one table shared by the text and JSON
/// parsers and by HELP, so the three cannot drift apart.
public struct CommandSyntax: Sendable {
    public var verb: Verb
    /// Positional argument names, as JSON fields name them.
    public var required: [String]
    public var optional: [String]
    /// `key=value` options (JSON: fields).
    public var options: [String]
    public var summary: String

    public var usage: String {
        var parts = [verb.rawValue]
        parts += required.map { "<\($0)>" }
        parts += optional.map { "[\($0)]" }
        parts += options.map { "[\($0)=<\($0)>]" }
        return parts.joined(separator: " ")
    }

    /// The same command as a JSON object: `{"cmd":"up","panel":"<panel>","button":"<button>"[,"fence":<fence>]}`.
    public var jsonUsage: String {
        func field(_ name: String) -> String {
            // Numbers may be given as JSON numbers (JSONCommandParser takes both).
            Self.numericFields.contains(name) ? "\"\(name)\":<\(name)>" : "\"\(name)\":\"<\(name)>\""
        }
        var text = "{\"cmd\":\"\(verb.rawValue.lowercased())\""
        for name in required { text += "," + field(name) }
        for name in optional + options { text += "[," + field(name) + "]" }
        return text + "}"
    }

    static let numericFields: Set<String> = ["fence", "n"]

    public static let all: [CommandSyntax] = [
        CommandSyntax(
            verb: .hello, required: ["name"], optional: [], options: ["key", "format"],
            summary: "name yourself; key= unlocks keyed panels; format=json switches to JSON"),
        CommandSyntax(
            verb: .help, required: [], optional: ["topic"], options: [],
            summary: "this list; HELP <command> shows one command, text and JSON"),
        CommandSyntax(verb: .panels, required: [], optional: [], options: [], summary: "list the panels"),
        CommandSyntax(
            verb: .join, required: ["panel"], optional: [], options: [],
            summary: "snapshot of a panel, then its events"),
        CommandSyntax(verb: .leave, required: ["panel"], optional: [], options: [], summary: "stop receiving its events"),
        CommandSyntax(
            verb: .down, required: ["panel", "button"], optional: [], options: [],
            summary: "press: GRANTED with a fence, or DENIED"),
        CommandSyntax(
            verb: .up, required: ["panel", "button"], optional: [], options: ["fence"],
            summary: "release what you pressed (the button's action, if any)"),
        CommandSyntax(
            verb: .cancel, required: ["panel", "button"], optional: [], options: ["fence"],
            summary: "release without the action"),
        CommandSyntax(
            verb: .history, required: ["panel"], optional: ["n"], options: [],
            summary: "the last n grants, fires and releases (default 20, max 1000)"),
        CommandSyntax(verb: .ping, required: [], optional: ["token"], options: [], summary: "PONG [token]"),
        CommandSyntax(verb: .quit, required: [], optional: [], options: [], summary: "say goodbye and close"),
        CommandSyntax(
            verb: .reset, required: ["panel"], optional: [], options: [],
            summary: "(admin) release every button of a panel"),
        CommandSyntax(
            verb: .arm, required: ["panel", "group"], optional: [], options: [],
            summary: "(admin) open a round of a buzzer group: the first DOWN wins, later ones are ranked"),
        CommandSyntax(
            verb: .kick, required: ["session"], optional: [], options: [],
            summary: "(admin) close a session, releasing what it owns"),
    ]

    /// Keyed by the verb uppercased.
    static let byVerb: [String: CommandSyntax] = Dictionary(uniqueKeysWithValues: all.map { ($0.verb.rawValue, $0) })

    /// The verb nearest to a mistyped one, for `unknown-command`.
    public static func closest(to word: String) -> String {
        let w = Array(word.uppercased().utf8)
        var best = "HELP"
        var bestDistance = Int.max
        for syntax in all {
            let d = editDistance(w, Array(syntax.verb.rawValue.utf8))
            if d < bestDistance {
                best = syntax.verb.rawValue
                bestDistance = d
            }
        }
        return best
    }

    static func editDistance(_ a: [UInt8], _ b: [UInt8]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        var current = Array(repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
