import Testing
@testable import ArbiterCore

/// One `Press` from the bytes to the core: what it may hold, and how the core answers a
/// press on a button the server could not look up.
@Suite struct PressShapeTests {
    @Test func onlyPressVerbsMakeAPress() {
        for verb in Verb.allCases {
            let press = Press(verb: verb, panel: "demo", button: "b1")
            #expect((press != nil) == [.down, .up, .cancel].contains(verb), "\(verb)")
        }
        #expect(Press(verb: .down, panel: "demo", button: "b1", fence: 3) == nil, "a DOWN takes no fence")
        #expect(Press(verb: .up, panel: "demo", button: "b1", fence: 3)?.fence == 3)
    }

    @Test func lookingUpKeepsVerbAndFence() {
        let named = Press<String>.cancel(panel: "demo", button: "b2", fence: 9)
        let resolved = named.resolved(panel: 4, button: 1)
        #expect(resolved == Press(verb: .cancel, panel: 4, button: 1, fence: 9))
        #expect(named.map(\.count) == Press(verb: .cancel, panel: 4, button: 2, fence: 9))
    }

    /// Without the press key a session is told so first, whether the button exists or not.
    @Test func forbiddenComesBeforeNoSuchButton() {
        var h = CoreHarness()
        #expect(h.down("nope", 1, access: .view) == ["DENIED nope forbidden"])
        #expect(h.up("nope", 1, access: .view) == ["ERROR forbidden"])
        #expect(h.down("nope", 1) == ["ERROR no-such-button"])
        #expect(h.core.lastFence == 0)
    }

    @Test func anIndexOutsideThePanelIsNoSuchButton() {
        var h = CoreHarness()
        var out = PanelOutput()
        h.core.handle(
            .press(.down(panel: 0, button: 99)), session: SessionID(1), name: "u1", access: .admin,
            now: h.now, into: &out)
        guard case .reply(.error(.noSuchButton, let message)) = out.items.first else {
            Issue.record("got \(out.items)")
            return
        }
        #expect(message == "no button #99 on panel \(h.core.config.id); its buttons: b1, b2, b3, sos, talk")
        out.removeAll()
        h.core.handle(
            .press(.down(panel: 0, button: -1)), session: SessionID(1), name: "u1", access: .view,
            now: h.now, into: &out)
        #expect(out.items.first == .reply(.deniedForbidden(buttonID: "#-1")))
    }

    /// A panel with many buttons names the first twenty and counts the rest.
    @Test func anUnknownButtonOnABigPanelListsTwentyAndCountsTheRest() {
        let buttons = (0..<25).map { ButtonConfig(id: "k\($0)", label: "K\($0)", kind: .tap) }
        var h = CoreHarness(PanelConfig(id: "big", buttons: buttons))
        var out = PanelOutput()
        h.core.handle(.unknownButton(.down, id: "nope"), session: SessionID(1), name: "u1", access: .press, now: h.now, into: &out)
        guard case .reply(.error(.noSuchButton, let message)) = out.items.first else {
            Issue.record("got \(out.items)")
            return
        }
        let twenty = (0..<20).map { "k\($0)" }.joined(separator: ", ")
        #expect(message == "no button nope on panel big; its buttons: \(twenty) and 5 more (JOIN big lists them all)")
    }
}
