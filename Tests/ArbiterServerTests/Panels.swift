import ArbiterCore

/// Panels with short timings, so socket tests finish quickly.
enum Panels {
    static let quick = PanelConfig(id: "t", title: "Quick", buttons: [
        ButtonConfig(id: "b1", kind: .tap, timeoutMs: 300),
        ButtonConfig(id: "b2", kind: .tap, timeoutMs: 300),
        ButtonConfig(id: "sos", kind: .hold, group: "emergency", holdMs: 400, progressMs: 100),
        ButtonConfig(id: "talk", kind: .talk, group: "talk", timeoutMs: 5000, longMs: 150, minTalkMs: 100),
    ])

    static let keyed = PanelConfig(id: "k", buttons: [ButtonConfig(id: "b1", kind: .tap)],
                                   keys: PanelKeys(view: "v1ew", press: "pr3ss", admin: "adm1n"))
}
