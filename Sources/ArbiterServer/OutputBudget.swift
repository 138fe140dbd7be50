import Synchronization

/// The unsent output of all connections together, bounded: past the limit the peers
/// with the largest backlog are cut off first, which frees their output at once and
/// releases what they held (`reason=disconnect`), until the total is back under 90%
/// of the limit. Each connection counts its backlog in whole 4 KiB units
/// (`Connection.Shared.accounted`), so replies written at once never touch the total.
final class OutputBudget: Sendable {
    static let unit = 4096
    let limit: Int
    private let total = Atomic<Int>(0)
    private let shedding = Atomic<Bool>(false)

    init(limit: Int) {
        self.limit = limit
    }

    var queuedBytes: Int { total.load(ordering: .relaxed) }

    /// Brings the connection's share in line with its backlog. Under its lock; true when
    /// the total just grew past the limit (the caller sheds once it let go of the lock).
    func account(_ s: inout Connection.Shared) -> Bool {
        let units = s.pending / OutputBudget.unit * OutputBudget.unit
        guard units != s.accounted else { return false }
        let delta = units - s.accounted
        s.accounted = units
        let now = total.wrappingAdd(delta, ordering: .relaxed).newValue
        return delta > 0 && now > limit
    }

    /// Cuts the largest backlogs until the total is under 90% of the limit. Called
    /// without any connection's lock held; one shed at a time.
    func shed(in server: ServerState) {
        guard !shedding.exchange(true, ordering: .acquiring) else { return }
        defer { shedding.store(false, ordering: .releasing) }
        guard queuedBytes > limit else { return }
        let connections = server.registry.withLock { Array($0.values) }
        var backlogs = connections.map { c in (c, c.shared.withLock { $0.gate.acceptsOutput ? $0.pending : 0 }) }
        backlogs.removeAll { $0.1 == 0 }
        backlogs.sort { $0.1 > $1.1 }
        let target = limit - limit / 10
        for (connection, _) in backlogs {
            guard queuedBytes > target else { break }
            let cut = connection.shared.withLock { s -> Bool in
                guard s.gate.acceptsOutput else { return false }
                // Nothing more is written to it: its output is dropped and freed now.
                s.gate = .discarding
                s.output.discard()
                _ = account(&s)
                return true
            }
            guard cut else { continue }
            server.metrics.add(.outputBudgetCuts)
            connection.reactor.requestClose(
                connection, reason: "output budget: the largest unsent backlog while all peers together had more than \(limit) bytes unsent")
        }
    }
}
