/// What the core decided, in the order it must reach the wire.
///
/// Replies and events are different things (one goes to the requester, the other to
/// every member) but their relative order matters: a reply precedes the events its
/// command causes, and events a timer owed before the command come first.
public struct PanelOutput: Sendable, Equatable {
    public enum Item: Sendable, Equatable {
        case reply(PanelReply)
        case event(PanelEvent)
    }

    public var items: [Item] = []

    public init() {}

    public mutating func removeAll() {
        items.removeAll(keepingCapacity: true)
    }

    public var events: [PanelEvent] {
        items.compactMap { if case .event(let e) = $0 { e } else { nil } }
    }

    public var replies: [PanelReply] {
        items.compactMap { if case .reply(let r) = $0 { r } else { nil } }
    }
}
