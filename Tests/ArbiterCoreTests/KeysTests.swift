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
