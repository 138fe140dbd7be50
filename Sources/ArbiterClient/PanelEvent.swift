import Foundation

/// What happens on a panel, in its `seq` order: every event of PROTOCOL.md section 5, the
/// client's own news (`disconnected`, `resynced`, `endedWhileAway`, `closed`), and
/// `unknown` for a line this version does not know, so that events a later server adds
/// never break an app.
///
/// `seq` is nil only where the server sends none: a `RELEASED` or `DEQUEUED` of a cluster
/// failover, and one's own `JOINED` in a panel above its presence size.
public enum PanelEvent: Sendable, Equatable, CustomStringConvertible {
    case pressed(button: String, owner: String, session: String, fence: UInt64, seq: UInt64)
    case fired(button: String, owner: String, session: String, fence: UInt64, seq: UInt64)
    case progress(button: String, value: Double, seq: UInt64)
    case midway(button: String, seq: UInt64)
    case tapped(button: String, owner: String, session: String, fence: UInt64, seq: UInt64)
    case started(button: String, owner: String, session: String, fence: UInt64, seq: UInt64)
    case stopped(
        button: String, owner: String, session: String, fence: UInt64, heldMilliseconds: UInt64, discarded: Bool, reason: String, seq: UInt64)
    case cancelled(button: String, owner: String, session: String, fence: UInt64, seq: UInt64)
    /// Ownership ended: `up`, `cancel`, `timeout`, `disconnect`, `fired`, `reset`,
    /// `shutdown`, or `failover` (no `seq`).
    case released(button: String, reason: String, owner: String, fence: UInt64, seq: UInt64?)
    case joined(name: String, session: String, seq: UInt64?)
    case left(name: String, session: String, seq: UInt64)
    /// Presence of a large panel, as counts.
    case presence(members: Int, joined: Int, left: Int, seq: UInt64)
    case queued(button: String, name: String, session: String, position: Int, seq: UInt64)
    case dequeued(button: String, name: String, session: String, position: Int, reason: String, seq: UInt64?)
    case armed(group: String, seq: UInt64)
    case closed(group: String, seq: UInt64)
    case buzzed(button: String, name: String, session: String, rank: Int, afterMicroseconds: UInt64, seq: UInt64)
    /// A `queue` group's line reached you: the button is yours with `fence` (the server's
    /// `GRANTED` that no `down` of this connection asked for).
    case handedOff(button: String, fence: UInt64)
    /// The connection dropped; the client is reconnecting. The state may be stale until
    /// `resynced`.
    case disconnected(reason: String)
    /// The panel's state was replaced by a fresh snapshot; draw from it.
    case resynced(PanelState, cause: ResyncCause)
    /// One of your grants (with its fence), or your place in a queue (fence nil), ended
    /// while you could not hear its `RELEASED`: reported once, after the `resynced` that
    /// revealed it. `reason` is the server's (from its HISTORY) where it still has it.
    case endedWhileAway(button: String, fence: UInt64?, reason: String?)
    /// The panel is gone for this client: left, closed, or refused on reconnecting
    /// (the reason says which). The stream ends after it.
    case removed(reason: String)
    /// A line this version does not know, as received.
    case unknown(String)

    /// The event's `seq`, for those that carry one.
    public var seq: UInt64? {
        switch self {
        case .pressed(_, _, _, _, let seq), .fired(_, _, _, _, let seq), .tapped(_, _, _, _, let seq), .started(_, _, _, _, let seq),
            .cancelled(_, _, _, _, let seq):
            seq
        case .progress(_, _, let seq), .midway(_, let seq), .left(_, _, let seq), .armed(_, let seq), .closed(_, let seq): seq
        case .stopped(_, _, _, _, _, _, _, let seq), .presence(_, _, _, let seq), .queued(_, _, _, _, let seq),
            .buzzed(_, _, _, _, _, let seq):
            seq
        case .released(_, _, _, _, let seq), .dequeued(_, _, _, _, _, let seq), .joined(_, _, let seq): seq
        case .handedOff, .disconnected, .resynced, .endedWhileAway, .removed, .unknown: nil
        }
    }

    /// The button the event is about, if one.
    public var button: String? {
        switch self {
        case .pressed(let button, _, _, _, _), .fired(let button, _, _, _, _), .tapped(let button, _, _, _, _),
            .started(let button, _, _, _, _), .cancelled(let button, _, _, _, _), .progress(let button, _, _),
            .midway(let button, _), .stopped(let button, _, _, _, _, _, _, _), .released(let button, _, _, _, _),
            .queued(let button, _, _, _, _), .dequeued(let button, _, _, _, _, _), .buzzed(let button, _, _, _, _, _),
            .handedOff(let button, _), .endedWhileAway(let button, _, _):
            button
        default: nil
        }
    }

    public var description: String {
        let tail = seq.map { " seq=\($0)" } ?? ""
        switch self {
        case .pressed(let b, let owner, let session, let fence, _): return "PRESSED \(b) owner=\(owner) session=\(session) fence=\(fence)\(tail)"
        case .fired(let b, let owner, let session, let fence, _): return "FIRED \(b) owner=\(owner) session=\(session) fence=\(fence)\(tail)"
        case .progress(let b, let value, _): return "PROGRESS \(b) value=\(String(format: "%.3f", value))\(tail)"
        case .midway(let b, _): return "MIDWAY \(b)\(tail)"
        case .tapped(let b, let owner, _, let fence, _): return "TAPPED \(b) owner=\(owner) fence=\(fence)\(tail)"
        case .started(let b, let owner, _, let fence, _): return "STARTED \(b) owner=\(owner) fence=\(fence)\(tail)"
        case .stopped(let b, let owner, _, let fence, let held, let discarded, let reason, _):
            return "STOPPED \(b) owner=\(owner) fence=\(fence) held_ms=\(held) discarded=\(discarded) reason=\(reason)\(tail)"
        case .cancelled(let b, let owner, _, let fence, _): return "CANCELLED \(b) owner=\(owner) fence=\(fence)\(tail)"
        case .released(let b, let reason, let owner, let fence, _): return "RELEASED \(b) reason=\(reason) owner=\(owner) fence=\(fence)\(tail)"
        case .joined(let name, let session, _): return "JOINED name=\(name) session=\(session)\(tail)"
        case .left(let name, let session, _): return "LEFT name=\(name) session=\(session)\(tail)"
        case .presence(let members, let joined, let left, _): return "PRESENCE members=\(members) joined=\(joined) left=\(left)\(tail)"
        case .queued(let b, let name, _, let position, _): return "QUEUED \(b) name=\(name) position=\(position)\(tail)"
        case .dequeued(let b, let name, _, let position, let reason, _):
            return "DEQUEUED \(b) name=\(name) position=\(position) reason=\(reason)\(tail)"
        case .armed(let group, _): return "ARMED \(group)\(tail)"
        case .closed(let group, _): return "CLOSED \(group)\(tail)"
        case .buzzed(let b, let name, _, let rank, let after, _): return "BUZZED \(b) name=\(name) rank=\(rank) after_us=\(after)\(tail)"
        case .handedOff(let b, let fence): return "GRANTED \(b) fence=\(fence) (handed off by the queue)"
        case .disconnected(let reason): return "disconnected: \(reason)"
        case .resynced(let state, let cause): return "resynced (\(cause)): seq=\(state.seq) fence=\(state.fence) members=\(state.members)"
        case .endedWhileAway(let b, let fence, let reason):
            return "ended while away: \(b)" + (fence.map { " fence=\($0)" } ?? " (place in line)") + " reason=\(reason ?? "unknown")"
        case .removed(let reason): return "removed: \(reason)"
        case .unknown(let line): return "unknown: \(line)"
        }
    }
}
