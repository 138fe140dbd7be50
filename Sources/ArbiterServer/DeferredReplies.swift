import ArbiterCore
import ArbiterWire

/// Replies a panel owes its sessions' earlier commands: a buzzer press waits for its
/// group's decision window (`PanelOutput.replyDeferred`), and so does what its session
/// sent behind it. Each took a slot in its connection's output (`ReplyOrder`), so that
/// the session's later answers wait behind it, and the core's `answer` fills the oldest.
/// Owned by the panel's queue.
struct DeferredReplies {
    struct Slot {
        let connection: Connection
        let token: UInt64
        let format: WireFormat
        let id: CommandID?
    }

    private var slots: [SessionID: [Slot]] = [:]

    var isEmpty: Bool { slots.isEmpty }

    /// Takes a slot in `connection`'s output for the reply its command will get later.
    mutating func reserve(for connection: Connection, format: WireFormat, id: CommandID?) {
        let token = connection.reserveReplySlot()
        slots[connection.session, default: []].append(Slot(connection: connection, token: token, format: format, id: id))
    }

    /// The slot of `session`'s oldest command still unanswered.
    mutating func take(_ session: SessionID) -> Slot? {
        guard var list = slots[session], !list.isEmpty else { return nil }
        let first = list.removeFirst()
        slots[session] = list.isEmpty ? nil : list
        return first
    }

    /// Every slot of `session`, taken out (its connection closed, or the panel is no
    /// longer decided here).
    mutating func drop(_ session: SessionID) -> [Slot] {
        slots.removeValue(forKey: session) ?? []
    }

    /// Every slot, taken out.
    mutating func dropAll() -> [Slot] {
        defer { slots.removeAll() }
        return slots.values.flatMap { $0 }
    }
}
