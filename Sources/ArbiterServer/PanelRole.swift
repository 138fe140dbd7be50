import ArbiterCore
import ArbiterIO
import ArbiterWire

/// Where a panel's commands are decided and where its output goes beyond this node's
/// own connections: the seam cluster mode fills for each panel (`ArbiterClusterServer`).
/// A single node has no role (`PanelHost.role` is nil): its core decides everything and
/// every member is one of its connections.
///
/// Every call but `visit` is made on the panel's queue.
package protocol PanelRole: AnyObject {
    /// A local session's command, and a press whose ids the reactor already looked up.
    func execute(_ command: ParsedCommand, receivedAt: Int64, from connection: Connection, flush: inout FlushList)
    func executePress(_ press: Press<Int>, receivedAt: Int64, format: WireFormat, from connection: Connection, flush: inout FlushList)
    /// A local session closed.
    func disconnect(_ connection: Connection, flush: inout FlushList)
    /// A reactor's visit with a session's commands, from the reactor's queue: `body` runs
    /// inside the panel's queue, and what it sends to other nodes may go out after.
    func visit(_ body: () -> Void)

    /// Whether this node holds the panel's decisions (it may still have to check with
    /// `mayDecideNow` before it makes one).
    var decides: Bool { get }
    /// Whether this node may decide at this instant; one that may no longer stops here.
    func mayDecideNow() -> Bool
    /// The node that decides the panel when it is another one, for PANELS and `/api/panels`.
    var leaderElsewhere: (node: String, address: String?)? { get }
    /// The node that decides the panel as this node knows it (itself included), for display.
    var leaderNode: String? { get }

    /// Marks a decision's output before it is appended (output that holds only while
    /// this node may decide).
    func markDecisionOutput(_ flush: inout FlushList)
    /// An event the core decided, after it was counted and before this node's members get it.
    func eventDecided(_ event: PanelEvent)
    /// Whether sessions of other nodes wait in a queue group's line here.
    var hasRemoteWaiters: Bool { get }
    /// The events of a decision with DEQUEUED lines, for waiters of other nodes.
    func waitersMayHaveLeft(_ events: [PanelEvent])
    /// A hand-off GRANTED for a session that is not one of this node's connections, or
    /// the reply to its earlier command (`PanelOutput.Notice.answersEarlier`).
    func deliverRemoteNotice(_ notice: PanelOutput.Notice)
    /// The reply to the command of another node's session being served comes later, as a
    /// notice that answers it.
    func deferRemoteReply()
    /// The player address of the other node's session being served (`Player`): its
    /// client's address is not known here.
    var requesterAddress: String? { get }
    /// The reply to a command that came from another node's session (the requester
    /// being served has no connection here).
    func deliverRemoteReply(_ reply: PanelReply)
    /// HISTORY for another node's session.
    func replyHistoryRemotely(_ count: Int, access: Access, format: WireFormat, id: CommandID?)
}
