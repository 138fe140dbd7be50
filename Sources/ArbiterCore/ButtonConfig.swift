/// One button of a panel, as configured. Defaults are those of PROTOCOL.md section 6.
public struct ButtonConfig: Sendable, Equatable {
    public var id: String
    public var label: String
    public var kind: ButtonKind
    /// Buttons of one group exclude each other; default `main`.
    public var group: String
    /// Longest ownership; 0 means none. Tap: from the grant (default 10 000).
    /// Talk: from STARTED (default 60 000). Hold: ignored, a hold fires or is released.
    public var timeoutMs: Int64
    /// Hold: how long the button must stay owned to fire (default 3000).
    public var holdMs: Int64
    /// Hold: interval of PROGRESS events while held (default 100; 0 sends none).
    public var progressMs: Int64
    /// Talk: how long a press must last to become a talk (default 350).
    public var longMs: Int64
    /// Talk: talks shorter than this are reported `discarded=true` (default 300).
    public var minTalkMs: Int64

    public static let defaultGroup = "main"

    public init(
        id: String,
        label: String? = nil,
        kind: ButtonKind,
        group: String = ButtonConfig.defaultGroup,
        timeoutMs: Int64? = nil,
        holdMs: Int64 = 3000,
        progressMs: Int64 = 100,
        longMs: Int64 = 350,
        minTalkMs: Int64 = 300
    ) {
        self.id = id
        self.label = label ?? id
        self.kind = kind
        self.group = group
        self.timeoutMs = timeoutMs ?? ButtonConfig.defaultTimeout(for: kind)
        self.holdMs = holdMs
        self.progressMs = progressMs
        self.longMs = longMs
        self.minTalkMs = minTalkMs
    }

    public static func defaultTimeout(for kind: ButtonKind) -> Int64 {
        switch kind {
        case .tap: 10_000
        case .hold: 0
        case .talk: 60_000
        }
    }
}
