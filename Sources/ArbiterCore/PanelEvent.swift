/// One event of a panel, delivered to every member (PROTOCOL.md section 5).
public struct PanelEvent: Sendable, Equatable {
    /// Per panel, from 1, each event one more than the last.
    public var seq: UInt64
    public var kind: Kind

    public init(seq: UInt64, kind: Kind) {
        self.seq = seq
        self.kind = kind
    }

    /// Buttons are indexes into the panel's `config.buttons`.
    public enum Kind: Sendable, Equatable {
        case pressed(button: Int, owner: Owner)
        case fired(button: Int, owner: Owner)
        /// `permille` is the value times 1000, 0...1000.
        case progress(button: Int, permille: Int)
        case midway(button: Int)
        case tapped(button: Int, owner: Owner)
        case started(button: Int, owner: Owner)
        case stopped(button: Int, owner: Owner, heldMs: Int64, discarded: Bool, reason: ReleaseReason)
        case cancelled(button: Int, owner: Owner)
        case released(button: Int, reason: ReleaseReason, owner: Owner)
        case joined(name: String, session: SessionID)
        case left(name: String, session: SessionID)
        /// Joins and leaves of a panel above `PanelConfig.presenceSummaryAbove` members,
        /// counted over a tick (`PresenceTally`), and the member count after them.
        case presence(members: Int, joined: Int, left: Int)
        // The fair-group events are `indirect` (one boxed reference each): inline, their
        // payloads made every copy of every event slower, on the press path too
        // (callgrind: +430 instructions per DOWN/UP request on an exclusive panel).
        /// A session joined the queue of `button`'s group at `position`.
        indirect case queued(button: Int, name: String, session: SessionID, position: Int)
        /// A session left the queue at `position` without a grant; those behind it move up.
        indirect case dequeued(button: Int, name: String, session: SessionID, position: Int, reason: DequeueReason)
        indirect case armed(group: String)
        /// A press ranked behind the round's winner.
        indirect case buzzed(Ranking)
        /// RESET ended the group's round.
        indirect case closed(group: String)
    }

    /// The button the event is about, if any.
    public var button: Int? {
        switch kind {
        case .pressed(let b, _), .fired(let b, _), .progress(let b, _), .midway(let b),
            .tapped(let b, _), .started(let b, _), .stopped(let b, _, _, _, _),
            .cancelled(let b, _), .released(let b, _, _), .queued(let b, _, _, _), .dequeued(let b, _, _, _, _):
            b
        case .buzzed(let r):
            r.button
        case .joined, .left, .presence, .armed, .closed:
            nil
        }
    }
}
