import ArbiterCore
import Testing

@testable import ArbiterWire

/// An unknown command (or HELP topic) names a verb only when it is a likely slip of
/// that verb; before, `FOO` was answered "did you mean JOIN?".
@Suite("unknown-command: did you mean")
struct CommandSuggestionTests {
    func textError(_ line: String) -> RequestError? {
        if case .failure(let e) = TextCommandParser.parse(line) { return e }
        return nil
    }

    func jsonError(_ text: String) -> RequestError? {
        if case .failure(let e) = JSONCommandParser.parse(text) { return e }
        return nil
    }

    @Test(arguments: [
        ("dwon", "DOWN"), ("DWN", "DOWN"), ("jion", "JOIN"), ("KIK", "KICK"), ("pnig", "PING"), ("up1", "UP"),
        ("HISTROY", "HISTORY"), ("cansle", "CANCEL"), ("PANEL", "PANELS"), ("hepl", "HELP"), ("HELLLO", "HELLO"), ("RESTE", "RESET"),
    ])
    func aSlipNamesItsVerb(typed: String, verb: String) {
        #expect(CommandSyntax.closest(to: typed) == verb)
    }

    @Test(arguments: ["FOO", "foo", "x", "zz", "ABCD", "PRESS", "RELAY-HELLO", "GET", "banana", String(repeating: "Q", count: 5000)])
    func aWordFarFromEveryVerbNamesNone(typed: String) {
        #expect(CommandSyntax.closest(to: typed) == nil)
    }

    @Test func theTextErrorSuggestsOnlyWhatIsClose() {
        #expect(textError("DWN demo b1")?.message == "DWN is not a command; did you mean DOWN? Send HELP for the list")
        #expect(textError("FOO")?.code == .unknownCommand)
        #expect(textError("FOO")?.message == "FOO is not a command; send HELP for the list")
    }

    @Test func theJSONErrorSuggestsOnlyWhatIsClose() {
        #expect(jsonError(#"{"cmd":"dwn"}"#)?.message == #"dwn is not a command; did you mean down? Send {"cmd":"help"} for the list"#)
        #expect(jsonError(#"{"cmd":"foo"}"#)?.code == .unknownCommand)
        #expect(jsonError(#"{"cmd":"foo"}"#)?.message == #"foo is not a command; send {"cmd":"help"} for the list"#)
    }

    @Test func anUnknownHelpTopicSuggestsOnlyWhatIsClose() {
        #expect(textError("HELP jion")?.message == "HELP has no topic jion: it is not a command; did you mean HELP JOIN? Send HELP alone for the list")
        #expect(textError("HELP foo")?.code == .badSyntax)
        #expect(textError("HELP foo")?.message == "HELP has no topic foo: it is not a command; send HELP alone for the list")
    }

    @Test func aSwapOfNeighboursIsOneEdit() {
        func d(_ a: String, _ b: String, _ limit: Int = 9) -> Int? { EditDistance.bounded(Array(a.utf8), Array(b.utf8), limit: limit) }
        #expect(d("DWON", "DOWN") == 1)
        #expect(d("DOWN", "DOWN") == 0)
        #expect(d("", "UP") == 2)
        #expect(d("KITTEN", "SITTING") == 3)
        #expect(d("CA", "ABC") == 3, "a swap and an insert at the same place: optimal string alignment counts 3")
        #expect(d("KITTEN", "SITTING", 2) == nil)
        #expect(d("A", "ABCD", 2) == nil)
    }
}
