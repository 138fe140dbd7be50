import ArbiterWire

/// The connections an executor appended output to during one batch, written once at
/// its end: coalescing a batch's replies and events into one write per connection.
struct FlushList {
    private var connections: [Connection] = []

    /// Appends output to `connection`, remembering to flush it or dropping a peer
    /// whose unsent output passed the bound.
    mutating func append(to connection: Connection, raw: Bool = false, _ body: (inout [UInt8], WireFormat) -> Void) {
        handle(connection.append(raw: raw, body), of: connection)
    }

    /// Appends a connection's last output (`Connection.appendLast`): it closes once written.
    mutating func appendLast(to connection: Connection, raw: Bool = false, _ body: (inout [UInt8], WireFormat) -> Void) {
        handle(connection.appendLast(raw: raw, body), of: connection)
    }

    private mutating func handle(_ outcome: Connection.AppendOutcome, of connection: Connection) {
        switch outcome {
        case .needsFlush: connections.append(connection)
        case .queued, .dropped: break
        case .overBudget:
            if !connections.contains(where: { $0 === connection }) { connections.append(connection) }
            connection.outputBudget.shed(in: connection.reactor.server)
        case .overflow:
            connection.reactor.server.metrics.add(.slowConsumerDrops)
            connection.reactor.requestClose(connection, reason: "slow consumer: too much output unsent")
        }
    }

    mutating func handle(_ outcome: Connection.FlushOutcome, of connection: Connection) {
        switch outcome {
        case .done: break
        case .closeNow: connection.reactor.requestClose(connection, reason: "closed after reply")
        case .failed: connection.reactor.requestClose(connection, reason: "write failed")
        }
    }

    mutating func flushAll() {
        guard !connections.isEmpty else { return }
        let batch = connections
        connections.removeAll(keepingCapacity: true)
        for connection in batch {
            handle(connection.flush(), of: connection)
        }
    }
}
