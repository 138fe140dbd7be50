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

    /// The answer to a press on a button the panel lacks (it changes nothing); who may
    /// not press is told that first, as for a button that exists.
    func unknownButtonReply(_ verb: Verb, id: String, access: Access) -> PanelReply {
        guard access >= .press else {
            if verb == .down { return .deniedForbidden(buttonID: id) }
            return .error(.forbidden, "\(verb.rawValue) needs the press key of panel \(self.id)")
        }
        return .error(.noSuchButton, "no button \(id) on panel \(self.id); \(buttonList())")
    }

    /// The panel's button ids for an unknown button's error, as an unknown panel's points
    /// to PANELS: the presser sees what it may press without a JOIN. A panel may have a
    /// thousand buttons, so past `shown` the rest is counted, not listed.
    func buttonList(shown: Int = 20) -> String {
        let ids = buttons.prefix(shown).map(\.id).joined(separator: ", ")
        let more = buttons.count - shown
        guard more > 0 else { return "its buttons: \(ids)" }
        return "its buttons: \(ids) and \(more) more (JOIN \(self.id) lists them all)"
    }

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
