import Testing
@testable import ArbiterCore

@Suite("keys and constant-time comparison")
struct KeysTests {
    @Test func noKeysMeansOpen() {
        #expect(PanelKeys().access(forKey: nil) == .admin)
        #expect(PanelKeys().access(forKey: "anything") == .admin)
    }

    @Test func higherKeyGrantsLowerLevels() {
        let keys = PanelKeys(view: "v", press: "p", admin: "a")
        #expect(keys.access(forKey: nil) == .none)
        #expect(keys.access(forKey: "v") == .view)
        #expect(keys.access(forKey: "p") == .press)
        #expect(keys.access(forKey: "a") == .admin)
        #expect(keys.access(forKey: "wrong") == .none)
        #expect(keys.recognizes("p"))
        #expect(!keys.recognizes("x"))
    }

    @Test func openLowerLevelsWithOnlyAnAdminKey() {
        let keys = PanelKeys(admin: "boss")
        #expect(keys.access(forKey: nil) == .press)
        #expect(keys.access(forKey: "boss") == .admin)
    }

    @Test func anUnkeyedLevelTakesTheNearestLowerKey() {
        // Only a press key: anyone views; only the press key presses, resets and kicks.
        let press = PanelKeys(press: "p")
        #expect(press.access(forKey: nil) == .view)
        #expect(press.access(forKey: "p") == .admin)
        #expect(press.access(forKey: "x") == .view)
        // Only a view key: the panel is private to that key.
        let view = PanelKeys(view: "v")
        #expect(view.access(forKey: nil) == .none)
        #expect(view.access(forKey: "v") == .admin)
        // View and admin keys: the view key also presses.
        let viewAdmin = PanelKeys(view: "v", admin: "a")
        #expect(viewAdmin.access(forKey: nil) == .none)
        #expect(viewAdmin.access(forKey: "v") == .press)
        #expect(viewAdmin.access(forKey: "a") == .admin)
        // Press and admin keys: viewing is open.
        let pressAdmin = PanelKeys(press: "p", admin: "a")
        #expect(pressAdmin.access(forKey: nil) == .view)
        #expect(pressAdmin.access(forKey: "p") == .press)
        #expect(pressAdmin.access(forKey: "a") == .admin)
    }

    @Test func constantTimeEquals() {
        #expect(ConstantTime.equals(Array("secret".utf8), Array("secret".utf8)))
        #expect(!ConstantTime.equals(Array("secret".utf8), Array("secreT".utf8)))
        #expect(!ConstantTime.equals(Array("secret".utf8), Array("secre".utf8)))
        #expect(!ConstantTime.equals(Array("secret".utf8), Array("secretx".utf8)))
        #expect(!ConstantTime.equals([], []))
        #expect(!ConstantTime.equals(Array("s".utf8), []))
    }

    @Test func identifiers() {
        #expect(Identifier.isValidID("b1"))
        #expect(Identifier.isValidID(String(repeating: "a", count: 64)))
        #expect(!Identifier.isValidID(String(repeating: "a", count: 65)))
        #expect(!Identifier.isValidID("a.b"))
        #expect(!Identifier.isValidID(""))
        #expect(Identifier.isValidName("alice.b-2_x"))
        #expect(!Identifier.isValidName("al ice"))
        #expect(!Identifier.isValidName("名前"))
        #expect(SessionID(parsing: "s12") == SessionID(12))
        #expect(SessionID(parsing: "s012") == nil)
        #expect(SessionID(parsing: "12") == nil)
    }
}
