import ArbiterCore
import ArbiterWire
import Testing

@Suite("config file: hooks")
struct HookConfigTests {
    func panel(hooks: String) -> String {
        """
        { "panels": [ { "id": "p", "buttons": [ { "id": "b1" }, { "id": "sos", "kind": "hold", "group": "emergency" } ],
          "hooks": \(hooks) } ] }
        """
    }

    func failure(_ hooks: String) -> String? {
        do {
            _ = try ConfigDecoder.decode(Array(panel(hooks: hooks).utf8))
            return nil
        } catch {
            return error.description
        }
    }

    @Test func defaultsAndEveryField() throws {
        let panels = try ConfigDecoder.decode(
            Array(
                panel(
                    hooks: """
                        [ { "url": "http://127.0.0.1:9000/a" },
                          { "url": "https://hooks.example/x?t=1", "events": ["fired", "armed"], "buttons": ["sos"],
                            "secret_file": "hook.secret", "timeout_ms": 2000, "max_age_s": 60, "max_pending": 5 } ]
                        """
                ).utf8))
        let hooks = panels[0].hooks
        #expect(hooks.count == 2)
        #expect(hooks[0] == HookConfig(url: "http://127.0.0.1:9000/a"))
        #expect(hooks[0].events == ["fired"] && hooks[0].buttons == nil && hooks[0].timeoutMs == 5000)
        #expect(hooks[0].maxAgeS == 86_400 && hooks[0].maxPending == 10_000)
        #expect(hooks[1].events == ["fired", "armed"] && hooks[1].buttons == [1] && hooks[1].secretFile == "hook.secret")
        #expect(hooks[1].timeoutMs == 2000 && hooks[1].maxAgeS == 60 && hooks[1].maxPending == 5)
    }

    @Test func everyBadHookIsNamedByItsPath() {
        #expect(failure(#"[{"url": "ftp://x/"}]"#) == #"panels[0].hooks[0].url: must start with http:// or https://, not "ftp://x/""#)
        #expect(failure(#"[{}]"#) == "panels[0].hooks[0].url: is required and must be a string")
        #expect(failure(#"[{"url": "http://x/", "events": ["fire"]}]"#)?.hasPrefix(#"panels[0].hooks[0].events[0]: unknown event "fire""#) == true)
        #expect(failure(#"[{"url": "http://x/", "events": []}]"#) == "panels[0].hooks[0].events: must be a non-empty array of strings")
        #expect(failure(#"[{"url": "http://x/", "buttons": ["b1", "nope"]}]"#) == #"panels[0].hooks[0].buttons[1]: no button "nope" on this panel"#)
        #expect(failure(#"[{"url": "http://x/", "timeout_ms": -1}]"#) == "panels[0].hooks[0].timeout_ms: must be between 1 and 600000, not -1")
        #expect(failure(#"[{"url": "http://x/", "max_pending": 0}]"#) == "panels[0].hooks[0].max_pending: must be between 1 and 1000000, not 0")
        #expect(failure(#"[{"url": "http://x/", "secret_file": ""}]"#) == "panels[0].hooks[0].secret_file: must be a file name")
        #expect(failure(#"[{"url": "https://x/", "ca_file": "ca.pem"}]"#)?.hasPrefix("panels[0].hooks[0].ca_file: is not supported") == true)
        #expect(failure(#"[{"url": "http://x/", "retries": 3}]"#)?.hasPrefix(#"panels[0].hooks[0]: unknown field "retries""#) == true)
        #expect(failure(#"{"url": "http://x/"}"#) == "panels[0].hooks: must be an array, not an object")
    }
}
