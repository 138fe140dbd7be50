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
        /// A reply to a session other than the requester: a queue's head told it is
        /// granted.
        case notice(SessionID, PanelReply)
    }

    /// A reply to another session, and how many of `events` come before it.
    public struct Notice: Sendable, Equatable {
        public var session: SessionID
        public var reply: PanelReply
        public var eventsBefore: Int
    }

    public private(set) var events: [PanelEvent] = []
    public private(set) var reply: PanelReply?
    /// How many of `events` come before `reply`.
    public private(set) var eventsBeforeReply = 0
    /// Replies to other sessions (rare: a queue hand-off), in order.
    public private(set) var notices: [Notice] = []

    public init() {}

    public mutating func removeAll() {
        events.removeAll(keepingCapacity: true)
        reply = nil
        eventsBeforeReply = 0
        if !notices.isEmpty { notices.removeAll(keepingCapacity: true) }
    }

    mutating func append(_ item: Item) {
        switch item {
        case .event(let e):
            events.append(e)
        case .reply(let r):
            assert(reply == nil, "one reply per command")
            reply = r
            eventsBeforeReply = events.count
        case .notice(let session, let r):
            notices.append(Notice(session: session, reply: r, eventsBefore: events.count))
        }
    }

    /// Everything in wire order (for tests and tools; the server reads the parts).
    public var items: [Item] {
        var all: [Item] = []
        var n = 0
        for i in 0...events.count {
            if i == eventsBeforeReply, let reply { all.append(.reply(reply)) }
            while n < notices.count, notices[n].eventsBefore == i {
                all.append(.notice(notices[n].session, notices[n].reply))
                n += 1
            }
            if i < events.count { all.append(.event(events[i])) }
        }
        return all
    }

}
