import ArbiterCore
import Testing
@testable import ArbiterWire

/// One `Verb` for the command table, both parsers and the press path.
@Suite struct VerbTests {
    @Test func theCommandTableListsEveryVerbOnce() {
        #expect(CommandSyntax.all.map(\.verb) == Verb.allCases)
        for verb in Verb.allCases {
            #expect(CommandSyntax.byVerb[verb.rawValue]?.verb == verb)
        }
    }

    @Test func theByteMatcherKnowsEveryVerbInAnyCase() {
        func match(_ word: String) -> Verb? {
            var copy = word
            return copy.withUTF8 { Verb(caseInsensitive: $0) }
        }
        for verb in Verb.allCases {
            #expect(match(verb.rawValue) == verb)
            #expect(match(verb.rawValue.lowercased()) == verb)
            let mixed = String(verb.rawValue.enumerated().map { $0.offset.isMultiple(of: 2) ? Character($0.element.lowercased()) : $0.element })
            #expect(match(mixed) == verb)
            #expect(match(verb.rawValue + "S") == nil)
            #expect(match(String(verb.rawValue.dropLast())) == nil)
        }
        for other in ["", "X", "DOWM", "UPP", "ARMS", "history2", "CANCEX"] {
            #expect(match(other) == nil, "\(other)")
        }
    }

    @Test func everyPressVerbAndNoOtherIsAPress() {
        #expect(Verb.allCases.filter(\.isPress) == [.down, .up, .cancel])
    }

    /// The fast parser's press and the general parser's agree on the shape, fence included.
    @Test func theFastPressIsTheGeneralPress() {
        var line = "cancel demo b1 fence=7"
        let fast = line.withUTF8 { FastLineParser.parse($0) }
        #expect(fast == .press(.cancel(panel: "demo", button: "b1", fence: 7)))
        #expect(TextCommandParser.parse("cancel demo b1 fence=7") == .command(ParsedCommand(request: fast!, format: .text)))
    }
}
