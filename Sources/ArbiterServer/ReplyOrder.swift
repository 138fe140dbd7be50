/// Keeps the answers this node gives a session itself (PONG, HELP, a local error) in
/// the order of its commands when earlier commands were relayed to another node
/// (PROTOCOL.md: "Replies to one connection come in the order of its commands").
///
/// A command relayed to a panel's leader takes a slot; a local answer written after that
/// waits behind the slot until the relayed reply has been written. Only those local
/// answers wait: replies and events that come from a leader are written as they arrive,
/// in the order that leader sent them, so a member's events and snapshots stay in the
/// leader's order (holding an event behind a re-JOIN would put it after the snapshot
/// that already counts it). Slots are answered by token: two panels' leaders may answer
/// in either order. Owned by the connection's lock; unused outside cluster mode.
struct ReplyOrder {
    private struct Slot {
        let token: UInt64
        var answered = false
        var after: [UInt8] = []
    }

    private var slots: [Slot] = []
    private var nextToken: UInt64 = 1
    /// Bytes held behind slots, for the connection's outbound bound.
    private(set) var heldBytes = 0
    /// `KICK`s of sessions on other nodes still unanswered (`KickWait`). The events a kick
    /// causes reach this node from the panels' leaders and can overtake the answer of the
    /// kicked session's node, so while one waits everything else for this connection
    /// (events, relayed replies) waits behind it, in arrival order: `OK KICK` comes before
    /// the `RELEASED ... reason=disconnect` and `LEFT` it causes, as on one node.
    private(set) var kicksAwaited = 0
    private var behindKicks: [UInt8] = []

    var isHolding: Bool { !slots.isEmpty }

    /// A slot for the reply of a command about to be relayed.
    mutating func reserve() -> UInt64 {
        let token = nextToken
        nextToken += 1
        slots.append(Slot(token: token))
        return token
    }

    /// A local answer written while a slot waits: it goes out after that slot's reply.
    mutating func hold(_ bytes: [UInt8]) {
        slots[slots.count - 1].after += bytes
        heldBytes += bytes.count
    }

    /// The reply for `token` was written; returns the held answers now due, in order
    /// (empty while an earlier slot still waits), or nil if no slot has that token.
    mutating func answered(_ token: UInt64) -> [UInt8]? {
        guard let index = slots.firstIndex(where: { $0.token == token }) else { return nil }
        slots[index].answered = true
        var due: [UInt8] = []
        while let first = slots.first, first.answered {
            due += first.after
            heldBytes -= first.after.count
            slots.removeFirst()
        }
        return due
    }

    /// A slot for a `KICK` asked of another node: until it is answered, output other than
    /// local answers waits too (`holdForKick`).
    mutating func reserveKick() -> UInt64 {
        kicksAwaited += 1
        return reserve()
    }

    /// Output made while a `KICK` waits: it goes out after the answer.
    mutating func holdForKick(_ bytes: [UInt8]) {
        behindKicks += bytes
        heldBytes += bytes.count
    }

    /// A `KICK`'s answer was written: once none waits any more, what waited behind them.
    mutating func kickAnswered() -> [UInt8] {
        kicksAwaited = max(0, kicksAwaited - 1)
        guard kicksAwaited == 0, !behindKicks.isEmpty else { return [] }
        let due = behindKicks
        behindKicks = []
        heldBytes -= due.count
        return due
    }

    /// Gives up on every slot (the connection says its last words): what was held, in
    /// order.
    mutating func releaseAll() -> [UInt8] {
        let due = slots.flatMap(\.after) + behindKicks
        slots.removeAll()
        behindKicks = []
        kicksAwaited = 0
        heldBytes = 0
        return due
    }
}
