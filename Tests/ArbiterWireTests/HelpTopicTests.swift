import ArbiterCore
import Foundation
import Testing
@testable import ArbiterWire

@Suite("HELP <topic>")
struct HelpTopicTests {
    func request(_ s: String) -> Request? {
        if case .command(let c) = TextCommandParser.parse(s) { return c.request }
        return nil
    }

    @Test func aTopicIsAVerbInAnyCase() {
        #expect(request("HELP down") == .help(topic: "DOWN"))
        #expect(request("help KICK") == .help(topic: "KICK"))
        if case .command(let c) = JSONCommandParser.parse(#"{"cmd":"help","topic":"up"}"#) {
            #expect(c.request == .help(topic: "UP"))
        } else {
            Issue.record("the JSON form of HELP up was refused")
        }
    }

    @Test func anUnknownTopicIsAClearErrorNamingHelp() {
        guard case .failure(let e) = TextCommandParser.parse("HELP dwon") else {
            Issue.record("HELP dwon was accepted")
            return
        }
        #expect(e.code == .badSyntax)
        #expect(e.message == "HELP has no topic dwon: it is not a command; did you mean HELP DOWN? Send HELP alone for the list")
        guard case .failure(let j) = JSONCommandParser.parse(#"{"cmd":"help","topic":"jion"}"#) else {
            Issue.record("the JSON HELP jion was accepted")
            return
        }
        #expect(j.message.hasPrefix("HELP has no topic jion: it is not a command; did you mean HELP JOIN?"))
    }

    @Test func theJSONFormOfEachCommand() {
        func json(_ verb: String) -> String? { CommandSyntax.byVerb[verb]?.jsonUsage }
        #expect(json("DOWN") == #"{"cmd":"down","panel":"<panel>","button":"<button>"}"#)
        #expect(json("UP") == #"{"cmd":"up","panel":"<panel>","button":"<button>"[,"fence":<fence>]}"#)
        #expect(json("HELLO") == #"{"cmd":"hello","name":"<name>"[,"key":"<key>"][,"format":"<format>"]}"#)
        #expect(json("HISTORY") == #"{"cmd":"history","panel":"<panel>"[,"n":<n>]}"#)
        #expect(json("QUIT") == #"{"cmd":"quit"}"#)
        // Every usage it prints parses once its placeholders are filled.
        for syntax in CommandSyntax.all {
            var filled = syntax.jsonUsage.replacingOccurrences(of: "[", with: "").replacingOccurrences(of: "]", with: "")
            for (placeholder, value) in [
                ("\"<name>\"", "\"al\""), ("\"<panel>\"", "\"demo\""), ("\"<button>\"", "\"b1\""),
                ("\"<session>\"", "\"s3\""), ("\"<key>\"", "\"k\""), ("\"<format>\"", "\"json\""),
                ("\"<token>\"", "\"t\""), ("\"<topic>\"", "\"down\""), ("\"<group>\"", "\"quiz\""), ("<fence>", "3"), ("<n>", "5"),
            ] {
                filled = filled.replacingOccurrences(of: placeholder, with: value)
            }
            if case .failure(let e) = JSONCommandParser.parse(filled) {
                Issue.record("\(syntax.verb): \(filled) was refused: \(e.message)")
            }
        }
    }
}
