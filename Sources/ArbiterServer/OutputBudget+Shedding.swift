import ArbiterIO

extension OutputBudget {
    /// Sheds among the server's open connections (ArbiterIO's `shed`), counting each cut
    /// and closing it on its reactor.
    func shed(in server: ServerState) {
        let reason = "output budget: the largest unsent backlog while all peers together had more than \(limit) bytes unsent"
        shed(
            among: { server.registry.withLock { Array($0.values) } },
            cut: { channel in
                server.metrics.add(.outputBudgetCuts)
                channel.loop.requestClose(channel, reason: reason)
            })
    }
}
