import ArbiterIO
import ArbiterWire

extension FlushList {
    /// Appends output to `connection`, remembering to flush it or dropping a peer
    /// whose unsent output passed the bound.
    mutating func append(to connection: Connection, raw: Bool = false, _ body: (inout [UInt8], WireFormat) -> Void) {
        handle(connection.append(raw: raw, epoch: leaseEpoch, stampMs: leaseStampMs, body), of: connection)
    }

    /// An answer this node gives `connection` itself (`Connection.appendReply`).
    mutating func appendReply(to connection: Connection, _ body: (inout [UInt8], WireFormat) -> Void) {
        handle(connection.appendReply(epoch: leaseEpoch, stampMs: leaseStampMs, body), of: connection)
    }

    /// The reply of a command relayed for `connection`, into the slot it took
    /// (`ReplyOrder`); without a slot (a JOIN this node sent for it), as any output.
    mutating func answer(_ slot: UInt64?, to connection: Connection, _ body: (inout [UInt8], WireFormat) -> Void) {
        guard let slot else { return append(to: connection, body) }
        handle(connection.fillReplySlot(slot, epoch: leaseEpoch, stampMs: leaseStampMs, body), of: connection)
    }

    /// The answer of a `KICK` asked of another node, into its slot: what waited behind it
    /// follows (`Connection.reserveKickSlot`).
    mutating func answerKick(_ slot: UInt64, to connection: Connection, _ body: (inout [UInt8], WireFormat) -> Void) {
        handle(connection.fillReplySlot(slot, kick: true, epoch: leaseEpoch, stampMs: leaseStampMs, body), of: connection)
    }

    /// Appends a connection's last output (`Connection.appendLast`): it closes once written.
    mutating func appendLast(to connection: Connection, raw: Bool = false, _ body: (inout [UInt8], WireFormat) -> Void) {
        handle(connection.appendLast(raw: raw, epoch: leaseEpoch, stampMs: leaseStampMs, body), of: connection)
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
