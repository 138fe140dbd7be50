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
            verb: .ranking, required: ["panel", "group"], optional: [], options: [],
            summary: "a buzzer group's round: ROUND, then RANK per ranked press, winner first"),
        CommandSyntax(
            verb: .kick, required: ["session"], optional: [], options: [],
            summary: "(admin) close a session, releasing what it owns"),
    ]

    /// Keyed by the verb uppercased.
    static let byVerb: [String: CommandSyntax] = Dictionary(uniqueKeysWithValues: all.map { ($0.verb.rawValue, $0) })

    /// The verb a mistyped one was probably meant to be, for `unknown-command` and an
    /// unknown HELP topic; nil when none is close. Before, the nearest verb was named
    /// however far it was: `FOO` got "did you mean JOIN?", which only misleads. Close is
    /// one edit for a word of up to four letters (`dwon`, `jion`, `KIK`), two for a
    /// longer one (`HISTROY`, `CANSLE`): more than that and a short word could be
    /// turned into almost any verb.
    public static func closest(to word: String) -> String? {
        let w = Array(word.uppercased().utf8)
        let limit = w.count <= 4 ? 1 : 2
        var best: (verb: String, distance: Int)?
        for syntax in all {
            guard let d = EditDistance.bounded(w, Array(syntax.verb.rawValue.utf8), limit: limit) else { continue }
            if best.map({ d < $0.distance }) ?? true { best = (syntax.verb.rawValue, d) }
        }
        return best?.verb
    }
}
