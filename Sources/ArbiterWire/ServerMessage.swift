import ArbiterCore

/// The server's messages that are not a panel's reply or event.
public enum ServerMessage: Sendable, Equatable {
    case welcome(session: SessionID, name: String)
    case hello(name: String, session: SessionID, role: String)
    /// One `# ` line of HELP.
    case helpLine(String)
    /// `OK <VERB> [<panel>]`.
    case ok(verb: String, panel: String?)
    /// `OK PANELS count=<n>` / `OK HISTORY <p> count=<n>`.
    case okCount(verb: String, panel: String?, count: Int)
    case okKick(SessionID)
    case panel(id: String, buttons: Int, members: Int, title: String, leader: PanelLeader = .singleNode)
    case record(HistoryRecord)
    case pong(token: String?)
    case error(ErrorCode, String)
    /// The last line before the server closes a connection on its own:
    /// `OK BYE reason=<shutdown|idle>`.
    case bye(reason: String)
}
