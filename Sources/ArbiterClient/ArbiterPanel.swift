import Dispatch

/// A panel this client joined: its live state, its events, and the presses.
public final class ArbiterPanel: Sendable {
    public let id: String
    /// Kept alive with the panel: a panel is only as good as its connection.
    public let client: ArbiterClient

    init(id: String, client: ArbiterClient) {
        self.id = id
        self.client = client
    }

    private var core: ClientCore { client.core }

    /// The panel as the server last described it, with every event since folded in.
    public var state: PanelState {
        core.state(of: id) ?? PanelState(panel: id, buttons: [])
    }

    /// The panel's events from now on, in order. Each access is a stream of its own.
    public var events: AsyncStream<PanelEvent> {
        core.events(of: id)
    }

    /// Presses `button`. `ERROR unavailable` is tried again for
    /// `ArbiterClientOptions.unavailableRetry`, also when the server says a relayed press
    /// may or may not have been done: a DOWN on a button one holds is answered with the
    /// same grant, so the retry makes no second press. A press whose connection dropped
    /// after it was sent is never sent again (`connectionLost`): the server ended the
    /// session's grants, and a DOWN sent late would be a new press.
    public func down(_ button: String) async throws -> PressResult {
        let ticket = core.openTicket(panel: id, button: button)
        defer { core.closeTicket(ticket) }
        let command = Command("down", panel: id, [("button", .string(button))])
        let reply = try await retrying(command, action: .down(panel: id, button: button), ticket: ticket) { _ in true }
        if reply.isError { throw reply.serverError }
        guard let result = EventDecoder.pressResult(reply.final) else { throw ArbiterClientError.unexpectedReply(reply.final.line) }
        return result
    }

    /// Releases `button` (`UP`). A `down` of it still waiting to be sent is withdrawn
    /// instead; a grant that ended meanwhile is `alreadyEnded`.
    @discardableResult
    public func up(_ button: String, fence: UInt64? = nil) async throws -> ReleaseResult {
        try await release("up", button, fence: fence)
    }

    /// Releases `button` without its action (`CANCEL`).
    @discardableResult
    public func cancel(_ button: String, fence: UInt64? = nil) async throws -> ReleaseResult {
        try await release("cancel", button, fence: fence)
    }

    private func release(_ verb: String, _ button: String, fence: UInt64?) async throws -> ReleaseResult {
        if let local = core.releaseLocally(panel: id, button: button) { return local }
        var fields: [(String, Command.Field)] = [("button", .string(button))]
        if let fence { fields.append(("fence", .number(fence))) }
        var unsure = false
        // A release never makes a second owner, so one the server may or may not have
        // passed on is sent again; a later `not-owner` then means the first one did it.
        let reply = try await retrying(Command(verb, panel: id, fields), action: .release(panel: id, button: button), ticket: nil) { reply in
            unsure = unsure || reply.mayHaveBeenDone
            return true
        }
        if reply.errorCode == "not-owner", unsure { return .released }
        if reply.isError { throw reply.serverError }
        if let ended = reply.final.string("ended") { return .alreadyEnded(reason: ended) }
        return .released
    }

    /// Stops the panel's events; its streams end. What the client holds stays held.
    public func leave() async throws {
        defer { core.remove(id, reason: "left") }
        let reply = try await core.perform(Command("leave", panel: id), action: .leave(panel: id))
        if reply.isError { throw reply.serverError }
    }

    /// Releases every button (`RESET`, admin).
    public func reset() async throws {
        let reply = try await retrying(Command("reset", panel: id), action: .none, ticket: nil) { !$0.mayHaveBeenDone }
        if reply.isError { throw reply.serverError }
    }

    /// Opens a round of a buzzer group (`ARM`, admin).
    public func arm(_ group: String) async throws {
        let reply = try await retrying(Command("arm", panel: id, [("group", .string(group))]), action: .none, ticket: nil) { !$0.mayHaveBeenDone }
        if reply.isError { throw reply.serverError }
    }

    /// Sends `command`, and again while the answer is `ERROR unavailable` that `retry`
    /// accepts, for at most `unavailableRetry`; the last reply either way.
    private func retrying(_ command: Command, action: ReplyAction, ticket: Int?, retry: (Reply) -> Bool) async throws -> Reply {
        let deadline = DispatchTime.now() + core.options.unavailableRetry
        var delay = 0.2
        while true {
            let reply = try await core.perform(command, action: action, ticket: ticket)
            guard reply.errorCode == "unavailable", retry(reply), DispatchTime.now() + delay < deadline else { return reply }
            // Withdrawable again only if nothing was done: a grant that may be held must be
            // released by an UP the server sees.
            if let ticket, !reply.mayHaveBeenDone { core.reopenTicket(ticket) }
            try await Task.sleep(nanoseconds: UInt64(delay * Double.random(in: 0.75...1.25) * 1e9))
            delay = min(delay * 2, 1)
        }
    }
}
