/// One panel: its buttons, their groups and its keys.
public struct PanelConfig: Sendable, Equatable {
    public var id: String
    public var title: String
    public var buttons: [ButtonConfig]
    public var keys: PanelKeys
    /// Groups described in the config; any other group is `exclusive`.
    public var groups: [String: GroupPolicy]
    /// Up to this many members, each join and leave is told by name (`JOINED`, `LEFT`);
    /// above it, as counts in one `PRESENCE` per tick (`PresenceTally`).
    public var presenceSummaryAbove: Int
    /// Where the panel's events are POSTed as they are broadcast.
    public var hooks: [HookConfig] = []

    public static let defaultPresenceSummaryAbove = 100

    public init(
        id: String, title: String? = nil, buttons: [ButtonConfig], keys: PanelKeys = PanelKeys(),
        groups: [String: GroupPolicy] = [:], presenceSummaryAbove: Int = PanelConfig.defaultPresenceSummaryAbove
    ) {
        self.id = id
        self.title = title ?? id
        self.buttons = buttons
        self.keys = keys
        self.groups = groups
        self.presenceSummaryAbove = presenceSummaryAbove
    }

    public func policy(ofGroup group: String) -> GroupPolicy { groups[group] ?? .exclusive }

    /// The panel served when no `--config` is given (PROTOCOL.md section 8).
    public static let demo = PanelConfig(
        id: "demo",
        title: "Demo",
        buttons: [
            ButtonConfig(id: "b1", label: "Button 1", kind: .tap),
            ButtonConfig(id: "b2", label: "Button 2", kind: .tap),
            ButtonConfig(id: "b3", label: "Button 3", kind: .tap),
            // Its own group, so the emergency button can always be pressed. "SOS" first: a
            // bare kiosk image often has no CJK font and would draw 緊急 as empty boxes.
            ButtonConfig(id: "sos", label: "SOS 緊急", kind: .hold, group: "emergency"),
            ButtonConfig(id: "talk", label: "Talk", kind: .talk, group: "talk"),
        ]
    )
}
