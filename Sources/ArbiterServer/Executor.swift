/// Where a connection's jobs are being run right now.
enum Executor {
    case reactor(Reactor)
    case panel(PanelHost)

    func isPanel(_ host: PanelHost) -> Bool {
        if case .panel(let p) = self { return p === host }
        return false
    }
}
