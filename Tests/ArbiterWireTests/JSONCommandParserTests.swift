import ArbiterCore
import Testing
@testable import ArbiterWire

@Suite("JSON commands and the JSON parser")
struct JSONCommandParserTests {
    func parse(_ s: String) -> TextCommandParser.Outcome { JSONCommandParser.parse(s) }

    @Test func protocolExample() {
        #expect(
            parse(#"{"cmd":"down","panel":"demo","button":"b1","id":"c7"}"#)
                == .command(ParsedCommand(request: .press(.down(panel: "demo", button: "b1")), format: .json, id: .string("c7"))))
    }

    @Test func fieldsMapOntoTheTextForm() {
        func req(_ s: String) -> Request? { if case .command(let c) = parse(s) { c.request } else { nil } }
        #expect(req(#"{"cmd":"UP","panel":"demo","button":"b1","fence":12}"#) == .press(.up(panel: "demo", button: "b1", fence: 12)))
        #expect(req(#"{"cmd":"hello","name":"alice","format":"json","key":"k"}"#) == .hello(name: "alice", key: "k", format: .json))
        #expect(req(#"{"cmd":"history","panel":"demo","n":5}"#) == .history(panel: "demo", count: 5))
        #expect(req(#"{"cmd":"kick","session":"s3"}"#) == .kick(session: SessionID(3)))
        #expect(req(#"{"cmd":"ping","token":42}"#) == .ping(token: "42"))
    }

    @Test func errorsKeepTheId() {
        guard case .failure(let e) = parse(#"{"cmd":"down","panel":"demo","id":9}"#) else { Issue.record("accepted"); return }
        #expect(e.code == .badSyntax)
        #expect(e.id == .number("9"))
        #expect(e.format == .json)
    }

    @Test func badCommands() {
        func code(_ s: String) -> ErrorCode? { if case .failure(let e) = parse(s) { e.code } else { nil } }
        #expect(code(#"{"cmd":"dwn"}"#) == .unknownCommand)
        #expect(code(#"{"panel":"demo"}"#) == .badSyntax)
        #expect(code(#"{"cmd":"join","panel":"demo","extra":1}"#) == .badSyntax)
        #expect(code(#"{"cmd":"join","panel":7}"#) == .badSyntax)
        #expect(code(#"{"cmd":"up","panel":"demo","button":"b1","fence":1.5}"#) == .badSyntax)
        #expect(code("[1,2]") == .badSyntax)
        #expect(code("{") == .badSyntax)
        #expect(code(#"{"cmd":"ping","id":[1]}"#) == .badSyntax)
    }

    @Test func jsonParser() throws {
        let v = try JSONParser.parse(Array(#" {"a":[1,-2.5e3,true,false,null],"b":"\u00e9\ud83d\ude00\n"} "#.utf8))
        #expect(v["a"] == .array([.number("1"), .number("-2.5e3"), .bool(true), .bool(false), .null]))
        #expect(v["b"] == .string("é😀\n"))
        for bad in ["", "{", "[1,]", "01", "1.", "\"\\ud800\"", "\"a\u{01}\"", "{\"a\" 1}", "tru", "1 2", "[[[[[[[[[[1]]]]]]]]]]"] {
            #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(Array(bad.utf8), maxDepth: 8) }
        }
    }
}
