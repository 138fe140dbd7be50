import ArbiterCore

/// The demo's buttons without timeouts: a loaded test machine can stall a test for longer
/// than the demo's 10 s tap timeout, and a grant must not end behind its back.
enum CalmPanel {
    static let config = PanelConfig(
        id: "demo",
        buttons: [
            ButtonConfig(id: "b1", kind: .tap, timeoutMs: 0),
            ButtonConfig(id: "b2", kind: .tap, timeoutMs: 0),
            ButtonConfig(id: "b3", kind: .tap, timeoutMs: 0),
            ButtonConfig(id: "sos", kind: .hold, group: "emergency"),
            ButtonConfig(id: "other", kind: .tap, group: "other", timeoutMs: 0),
        ])
}
