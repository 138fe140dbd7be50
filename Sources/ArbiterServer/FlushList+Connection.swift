import ArbiterIO
import ArbiterWire

extension FlushList {
    /// Appends output to `connection`, remembering to flush it or dropping a peer
    /// whose unsent output passed the bound. Output of no panel (a greeting, HTTP bytes).
    mutating func append(to connection: Connection, raw: Bool = false, _ body: (inout [UInt8], WireFormat) -> Void) {
        handle(connection.append(raw: raw, epoch: outputEpoch, stampMs: outputStampMs, body), of: connection)
    }

    /// Output of panel `panel` (its index) that answers no command of this session: an
    /// event, a snapshot, a hand-off (`ReplyOrder.Output.event`).
    package mutating func append(to connection: Connection, panel: Int, _ body: (inout [UInt8], WireFormat) -> Void) {
        handle(connection.append(panel: panel, epoch: outputEpoch, stampMs: outputStampMs, body), of: connection)
    }

    /// An answer this node gives `connection` itself (`Connection.appendReply`); `panel`:
    /// the panel this node decided it in.
    package mutating func appendReply(to connection: Connection, panel: Int? = nil, _ body: (inout [UInt8], WireFormat) -> Void) {
        handle(connection.appendReply(panel: panel, epoch: outputEpoch, stampMs: outputStampMs, body), of: connection)
    }

    /// The reply of a command relayed for `connection`, into the slot it took
    /// (`ReplyOrder`); without a slot (a JOIN this node sent for it), as the panel's
    /// other output. `panel`: nil for a `KICK` asked of another node, or a gathered
    /// `PANELS`.
    package mutating func answer(_ slot: UInt64?, to connection: Connection, panel: Int?, _ body: (inout [UInt8], WireFormat) -> Void) {
        guard let slot else { return handle(connection.append(panel: panel, epoch: outputEpoch, stampMs: outputStampMs, body), of: connection) }
        handle(connection.fillReplySlot(slot, panel: panel, epoch: outputEpoch, stampMs: outputStampMs, body), of: connection)
    }

    /// Appends a connection's last output (`Connection.appendLast`): it closes once written.
    mutating func appendLast(to connection: Connection, raw: Bool = false, _ body: (inout [UInt8], WireFormat) -> Void) {
        handle(connection.appendLast(raw: raw, epoch: outputEpoch, stampMs: outputStampMs, body), of: connection)
    }

    /// `Connection.giveUpOverdueReplies`, its output flushed like any other; how many
    /// slots it answered.
    mutating func giveUpOverdueReplies(of connection: Connection, at nowMs: Int64, limitMs: Int64) -> Int {
        let (count, outcome) = connection.giveUpOverdueReplies(at: nowMs, limitMs: limitMs)
        if count > 0 { handle(outcome, of: connection) }
        return count
    }

    private mutating func handle(_ outcome: Channel.AppendOutcome, of connection: Connection) {
        switch outcome {
        case .needsFlush: enlist(connection)
        case .queued, .dropped: break
        case .overBudget:
            enlistOnce(connection)
            connection.budget.shed(in: connection.reactor.server)
        case .overflow:
            connection.reactor.server.metrics.add(.slowConsumerDrops)
            connection.reactor.requestClose(connection, reason: "slow consumer: too much output unsent")
        }
    }
}
