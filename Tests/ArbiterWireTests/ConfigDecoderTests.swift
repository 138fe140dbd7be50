import ArbiterCore
import Testing
@testable import ArbiterWire

@Suite("config file")
struct ConfigDecoderTests {
    func decode(_ s: String) throws(ConfigDecoder.Failure) -> [PanelConfig] {
        try ConfigDecoder.decode(Array(s.utf8))
    }

    func failure(_ s: String) -> String? {
        do { _ = try decode(s); return nil } catch { return error.description }
    }

    @Test func protocolExample() throws {
        let panels = try decode(
            """
            { "panels": [ { "id": "demo", "title": "Demo", "buttons": [
                { "id": "b1", "label": "Button 1", "kind": "tap", "timeout_ms": 10000 },
                { "id": "sos", "label": "緊急", "kind": "hold", "hold_ms": 3000, "group": "emergency" },
                { "id": "talk", "label": "Talk", "kind": "talk", "long_ms": 350, "min_talk_ms": 300, "group": "talk" } ],
                "keys": { "press": "optional secret", "view": "optional", "admin": "optional2" } } ] }
            """)
        #expect(panels.count == 1)
        #expect(panels[0].buttons.map(\.kind) == [.tap, .hold, .talk])
        #expect(panels[0].buttons[1].label == "緊急")
        #expect(panels[0].buttons[1].group == "emergency")
        #expect(panels[0].buttons[0].group == "main")
        #expect(panels[0].buttons[2].timeoutMs == 60_000)
        #expect(panels[0].keys.press == "optional secret")
    }

    @Test func aByteOrderMarkIsSkipped() throws {
        let panels = try ConfigDecoder.decode([0xEF, 0xBB, 0xBF] + Array(#"{"panels":[{"id":"p","buttons":[{"id":"a"}]}]}"#.utf8))
        #expect(panels.first?.id == "p")
    }

    /// A syntax error is placed where an editor would show it, not as a byte offset.
    @Test func syntaxErrorsGiveLineAndColumn() {
        // The missing comma after "a" on line 3; the label before it is two characters
        // but six bytes, and the column counts characters.
        let text = "{\"panels\": [\n  {\"id\": \"p\",\n   \"title\": \"緊急\" \"buttons\": []}]}"
        #expect(failure(text) == "not valid JSON at line 3, column 18: expected ',' or '}'")
        #expect(failure("{") == "not valid JSON at line 1, column 2: expected a member name")
        #expect(failure("{\"panels\": [\n") == "not valid JSON at line 2, column 1: unexpected end")
        // A byte order mark is no character of the first line.
        #expect(throws: ConfigDecoder.Failure(path: "", reason: "not valid JSON at line 1, column 1: unexpected character")) {
            try ConfigDecoder.decode([0xEF, 0xBB, 0xBF] + Array("x".utf8))
        }
    }

    @Test func errorsNameThePathAndTheProblem() {
        #expect(failure("{") != nil)
        #expect(failure(#"{"panels":[]}"#) == "panels: must list at least one panel")
        #expect(
            failure(#"{"panels":[{"id":"p","buttons":[{"id":"a","kind":"push"}]}]}"#)
                == #"panels[0].buttons[0].kind: must be tap, hold or talk, not "push""#)
        #expect(
            failure(#"{"panels":[{"id":"p","buttons":[{"id":"a"},{"id":"a"}]}]}"#)
                == #"panels[0].buttons[1].id: "a" is used twice"#)
        #expect(failure(#"{"panels":[{"id":"p q","buttons":[{"id":"a"}]}]}"#)?.hasPrefix("panels[0].id:") == true)
        #expect(failure(#"{"panels":[{"id":"p","buttons":[{"id":"a","hold_ms":-1}]}]}"#)?.hasPrefix("panels[0].buttons[0].hold_ms:") == true)
        #expect(failure(#"{"panels":[{"id":"p","buttons":[{"id":"a","colour":"red"}]}]}"#)?.contains("unknown field \"colour\"") == true)
        #expect(
            failure(#"{"panels":[{"id":"p","buttons":[{"id":"a","hold_ms":1000}]}]}"#)
                == #"panels[0].buttons[0].hold_ms: applies to hold buttons, and this one is tap (no "kind" given)"#)
        #expect(
            failure(#"{"panels":[{"id":"p","buttons":[{"id":"a","kind":"hold","timeout_ms":5000}]}]}"#)
                == #"panels[0].buttons[0].timeout_ms: applies to tap and talk buttons, and this one is hold"#)
        #expect(
            failure(#"{"panels":[{"id":"p","buttons":[{"id":"a","kind":"tap","long_ms":200}]}]}"#)?.hasPrefix(
                "panels[0].buttons[0].long_ms: applies to talk buttons") == true)
        #expect(failure(#"{"panels":[{"id":"p","buttons":[{"id":"a","label":"x\ny"}]}]}"#)?.contains("control") == true)
        #expect(failure(#"{"panels":[{"id":"p","title":"x\u0085y","buttons":[{"id":"a"}]}]}"#)?.contains("control") == true)
        #expect(failure(#"{"panels":[{"id":"p","buttons":[{"id":"a"}]},{"id":"p","buttons":[{"id":"a"}]}]}"#) == #"panels[1].id: "p" is used twice"#)
    }
}
