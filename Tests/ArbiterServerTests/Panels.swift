import ArbiterCore

/// Panels with short timings, so socket tests finish quickly.
enum Panels {
    static let quick = PanelConfig(
        id: "t", title: "Quick",
        buttons: [
            ButtonConfig(id: "b1", kind: .tap, timeoutMs: 300),
            ButtonConfig(id: "b2", kind: .tap, timeoutMs: 300),
            ButtonConfig(id: "sos", kind: .hold, group: "emergency", holdMs: 400, progressMs: 100),
            ButtonConfig(id: "talk", kind: .talk, group: "talk", timeoutMs: 5000, longMs: 150, minTalkMs: 100),
        ])

    /// `q`: a queue group (two taps and a short hold); `quiz`: a buzzer group.
    static let fair = PanelConfig(
        id: "f", title: "Fair",
        buttons: [
            ButtonConfig(id: "a", kind: .tap, group: "q"),
            ButtonConfig(id: "b", kind: .tap, group: "q"),
            ButtonConfig(id: "h", kind: .hold, group: "q", holdMs: 300, progressMs: 0),
            ButtonConfig(id: "red", label: "Red team", kind: .tap, group: "quiz"),
            ButtonConfig(id: "blue", label: "Blue team", kind: .tap, group: "quiz"),
        ], groups: ["q": .queue(maxQueue: 2), "quiz": .buzzer(earlyLockoutMs: 200)])

    static let keyed = PanelConfig(
        id: "k", buttons: [ButtonConfig(id: "b1", kind: .tap)],
        keys: PanelKeys(view: "v1ew", press: "pr3ss", admin: "adm1n"))
}
