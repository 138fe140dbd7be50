import ArbiterCore
import Testing
@testable import ArbiterWire

@Suite("text commands")
struct TextCommandParserTests {
    func parse(_ s: String) -> TextCommandParser.Outcome { TextCommandParser.parse(s) }

    func request(_ s: String) -> Request? {
        if case .command(let c) = parse(s) { return c.request }
        return nil
    }

    func error(_ s: String) -> (ErrorCode, String)? {
        if case .failure(let e) = parse(s) { return (e.code, e.message) }
        return nil
    }

    @Test func everyVerb() {
        #expect(request("HELLO alice") == .hello(name: "alice", key: nil, format: nil))
        #expect(request("hello alice key=\"my secret\" format=json") == .hello(name: "alice", key: "my secret", format: .json))
        #expect(request("HELP") == .help(topic: nil))
        #expect(request("panels") == .panels)
        #expect(request("Join demo") == .join(panel: "demo"))
        #expect(request("LEAVE demo") == .leave(panel: "demo"))
        #expect(request("DOWN demo b1") == .press(.down(panel: "demo", button: "b1")))
        #expect(request("up demo b1 fence=12") == .press(.up(panel: "demo", button: "b1", fence: 12)))
        #expect(request("CANCEL demo b1") == .press(.cancel(panel: "demo", button: "b1", fence: nil)))
        #expect(request("HISTORY demo") == .history(panel: "demo", count: 20))
        #expect(request("HISTORY demo 5000") == .history(panel: "demo", count: 1000))
        #expect(request("PING") == .ping(token: nil))
        #expect(request("PING abc") == .ping(token: "abc"))
        #expect(request("PING a=b") == .ping(token: "a=b"))
        #expect(request("QUIT") == .quit)
        #expect(request("RESET demo") == .reset(panel: "demo"))
        #expect(request("KICK s12") == .kick(session: SessionID(12)))
    }

    @Test func idsAreCaseSensitiveVerbsAreNot() {
        #expect(request("dOwN Demo B1") == .press(.down(panel: "Demo", button: "B1")))
    }

    @Test func whitespaceAndEmptyLines() {
        #expect(parse("") == .empty)
        #expect(parse("   \t ") == .empty)
        #expect(request("  DOWN\tdemo   b1  ") == .press(.down(panel: "demo", button: "b1")))
    }

    @Test func quotingAndEscapes() throws {
        var line = "HELLO bob key=\"a \\\"quoted\\\" \\\\ key\""
        let tokens = try line.withUTF8 { try LineTokenizer.tokenize($0) }
        #expect(tokens == [LineToken(value: "HELLO"), LineToken(value: "bob"), LineToken(key: "key", value: "a \"quoted\" \\ key")])
        #expect(error("HELLO bob key=\"open")?.0 == .badSyntax)
        #expect(error("HELLO bob key=\"a\\x\"")?.0 == .badSyntax)
    }

    @Test func unknownCommandNamesTheClosestVerbAndHelp() {
        let e = error("DWN demo b1")
        #expect(e?.0 == .unknownCommand)
        #expect(e?.1.contains("DOWN") == true)
        #expect(e?.1.contains("HELP") == true)
    }

    @Test func aByteOrderMarkIsSkipped() {
        guard case .command(let c) = parse("\u{FEFF}PING bom") else {
            Issue.record("a leading BOM must not make an unknown command")
            return
        }
        #expect(c.request == .ping(token: "bom"))
        #expect(parse("\u{FEFF}") == .empty)
    }

    @Test func badArguments() {
        #expect(error("DOWN demo")?.0 == .badSyntax)
        #expect(error("DOWN demo b1 extra")?.0 == .badSyntax)
        #expect(error("DOWN demo b1 fence=1")?.0 == .badSyntax)
        #expect(error("UP demo b1 fence=-1")?.0 == .badSyntax)
        #expect(error("UP demo b1 fence=+240")?.0 == .badSyntax)
        #expect(error("HISTORY demo +5")?.0 == .badSyntax)
        #expect(error("UP demo b1 fence=x")?.0 == .badSyntax)
        #expect(error("UP demo b1 fence=1 fence=2")?.0 == .badSyntax)
        #expect(error("JOIN de.mo")?.0 == .badSyntax)
        #expect(error("JOIN " + String(repeating: "p", count: 65))?.0 == .badSyntax)
        #expect(error("HELLO al ice")?.0 == .badSyntax)
        #expect(error("HELLO alice format=xml")?.0 == .badSyntax)
        #expect(error("HISTORY demo -1")?.0 == .badSyntax)
        #expect(error("KICK 12")?.0 == .badSyntax)
        #expect(error("DOWN demo b1")?.0 == nil)
    }

    @Test func invalidUTF8IsItsOwnError() {
        let bytes: [UInt8] = Array("DOWN demo ".utf8) + [0xFF, 0x41]
        let outcome = bytes.withUnsafeBufferPointer { TextCommandParser.parse($0) }
        guard case .failure(let e) = outcome else { Issue.record("accepted bad UTF-8"); return }
        #expect(e.code == .badUTF8)
    }

    @Test func aLineStartingWithABraceIsJSON() {
        guard case .command(let c) = parse(" {\"cmd\":\"ping\",\"token\":\"t\",\"id\":7}") else { Issue.record("not parsed"); return }
        #expect(c == ParsedCommand(request: .ping(token: "t"), format: .json, id: .number("7")))
    }

    @Test func utf8Validator() {
        let valid: [[UInt8]] = [Array("緊急".utf8), Array("plain ascii longer than eight".utf8), [0xF0, 0x9F, 0x98, 0x80]]
        let invalid: [[UInt8]] = [[0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82], [0x80], [0xF8]]
        for v in valid { #expect(UTF8Validator.isValid(v)) }
        for v in invalid { #expect(!UTF8Validator.isValid(v)) }
    }
}
