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
        /// The reply to an earlier command of a session, which was held back
        /// (`replyDeferred`): a buzzer press ranked once its decision window passed.
        case answer(SessionID, PanelReply)
    }

    /// A reply to another session, and how many of `events` come before it.
    public struct Notice: Sendable, Equatable {
        public var session: SessionID
        public var reply: PanelReply
        public var eventsBefore: Int
        /// It answers an earlier command of the session whose reply was deferred (`answer`),
        /// and goes where that reply was due.
        public var answersEarlier = false
    }

    public private(set) var events: [PanelEvent] = []
    /// Whether the command has its reply (`reply`).
    public private(set) var hasReply = false
    /// The reply while `hasReply`, else `.reset`. Not a `PanelReply?`: the compiler
    /// copies and destroys that optional through generic value witnesses (callgrind:
    /// about +300 instructions per DOWN/UP request).
    public private(set) var replyIfAny: PanelReply = .reset
    public var reply: PanelReply? { hasReply ? replyIfAny : nil }
    /// How many of `events` come before `reply`.
    public private(set) var eventsBeforeReply = 0
    /// Replies to other sessions (rare: a queue hand-off, a buzzer press ranked late),
    /// in order.
    public private(set) var notices: [Notice] = []
    /// The command has no reply yet: it comes later as an `answer` (a buzzer press waits
    /// for its decision window). Its session's later answers must wait behind it.
    public private(set) var replyDeferred = false

    public init() {}

    public mutating func removeAll() {
        events.removeAll(keepingCapacity: true)
        if hasReply {
            hasReply = false
            replyIfAny = .reset
        }
        eventsBeforeReply = 0
        if !notices.isEmpty { notices.removeAll(keepingCapacity: true) }
        replyDeferred = false
    }

    mutating func deferReply() {
        assert(!hasReply, "one reply per command")
        replyDeferred = true
    }

    /// Appends what `other` holds, in its order, its reply as the `answer` to
    /// `session`'s earlier command (a follow-up of a deferred press, run once it was
    /// ranked).
    mutating func append(contentsOf other: PanelOutput, answering session: SessionID) {
        for item in other.items {
            switch item {
            case .reply(let r): append(.answer(session, r))
            case .event, .notice, .answer: append(item)
            }
        }
    }

    mutating func append(_ item: Item) {
        switch item {
        case .event(let e):
            events.append(e)
        case .reply(let r):
            assert(!hasReply, "one reply per command")
            hasReply = true
            replyIfAny = r
            eventsBeforeReply = events.count
        case .notice(let session, let r):
            notices.append(Notice(session: session, reply: r, eventsBefore: events.count))
        case .answer(let session, let r):
            notices.append(Notice(session: session, reply: r, eventsBefore: events.count, answersEarlier: true))
        }
    }

    /// Everything in wire order (for tests and tools; the server reads the parts).
    public var items: [Item] {
        var all: [Item] = []
        var n = 0
        for i in 0...events.count {
            if i == eventsBeforeReply, hasReply { all.append(.reply(replyIfAny)) }
            while n < notices.count, notices[n].eventsBefore == i {
                let notice = notices[n]
                all.append(notice.answersEarlier ? .answer(notice.session, notice.reply) : .notice(notice.session, notice.reply))
                n += 1
            }
            if i < events.count { all.append(.event(events[i])) }
        }
        return all
    }

}
