/// Keeps a session's replies in the order of its commands when some are answered by
/// another node (PROTOCOL.md: "Replies to one connection come in the order of its
/// commands").
///
/// A command relayed to a panel's leader takes a slot; whatever the connection is written
/// after that (a PONG, an error found here, an event) waits behind the slot until the
/// relayed reply fills it, so the connection reads exactly what it would have read had
/// the leader answered at once. Replies from one leader come back in order, but two
/// panels' leaders may answer in either order, so slots are filled by token. Owned by the
/// connection's lock; empty, and never consulted beyond `isHolding`, outside cluster mode.
struct ReplyOrder {
    private struct Slot {
        let token: UInt64
        var reply: [UInt8]?
        var after: [UInt8] = []
    }

    private var slots: [Slot] = []
    private var nextToken: UInt64 = 1
    /// Bytes held behind slots, for the connection's outbound bound.
    private(set) var heldBytes = 0

    var isHolding: Bool { !slots.isEmpty }

    /// A slot for the reply of a command about to be relayed.
    mutating func reserve() -> UInt64 {
        let token = nextToken
        nextToken += 1
        slots.append(Slot(token: token))
        return token
    }

    /// Output written while a slot waits: it goes out after that slot's reply.
    mutating func hold(_ bytes: [UInt8]) {
        slots[slots.count - 1].after += bytes
        heldBytes += bytes.count
    }

    /// The reply for `token`; returns what is now due, in order (empty while an earlier
    /// slot still waits), or nil if no slot has that token (released meanwhile).
    mutating func fill(_ token: UInt64, with reply: [UInt8]) -> [UInt8]? {
        guard let index = slots.firstIndex(where: { $0.token == token }) else { return nil }
        slots[index].reply = reply
        heldBytes += reply.count
        var due: [UInt8] = []
        while let first = slots.first, let filled = first.reply {
            due += filled
            due += first.after
            heldBytes -= filled.count + first.after.count
            slots.removeFirst()
        }
        return due
    }

    /// Gives up on every slot (the connection says its last words, or closes): what was
    /// held, in order, with the replies that came.
    mutating func releaseAll() -> [UInt8] {
        var due: [UInt8] = []
        for slot in slots {
            if let reply = slot.reply { due += reply }
            due += slot.after
        }
        slots.removeAll()
        heldBytes = 0
        return due
    }
}
