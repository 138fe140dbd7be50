/// What the core decided, in the order it must reach the wire.
///
/// Replies and events are different things (one goes to the requester, the other to
/// every member) but their relative order matters: a reply precedes the events its
/// command causes, and events a timer owed before the command come first. A command
/// has at most one reply, so the order is kept as the number of events before it,
/// and the press path never wraps each event in another enum.
public struct PanelOutput: Sendable, Equatable {
    public enum Item: Sendable, Equatable {
        case reply(PanelReply)
        case event(PanelEvent)
    }

    public private(set) var events: [PanelEvent] = []
    public private(set) var reply: PanelReply?
    /// How many of `events` come before `reply`.
    public private(set) var eventsBeforeReply = 0

    public init() {}

    public mutating func removeAll() {
        events.removeAll(keepingCapacity: true)
        reply = nil
        eventsBeforeReply = 0
    }

    mutating func append(_ item: Item) {
        switch item {
        case .event(let e):
            events.append(e)
        case .reply(let r):
            assert(reply == nil, "one reply per command")
            reply = r
            eventsBeforeReply = events.count
        }
    }

    /// Everything in wire order (for tests and tools; the server reads the parts).
    public var items: [Item] {
        var all: [Item] = events.prefix(eventsBeforeReply).map { .event($0) }
        if let reply { all.append(.reply(reply)) }
        all += events.dropFirst(eventsBeforeReply).map { .event($0) }
        return all
    }

    public var replies: [PanelReply] { reply.map { [$0] } ?? [] }
}
