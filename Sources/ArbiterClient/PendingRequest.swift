import Dispatch

/// A command sent on a link and not answered yet. Its continuation is resumed exactly
/// once, by whoever takes it out under the core's lock: the reply, the link's end, the
/// caller's cancellation (which leaves the action to run when the reply comes).
final class PendingRequest: @unchecked Sendable {
    let id: String
    let action: ReplyAction
    let allowance: Double
    let sentAt = DispatchTime.now()
    let isPing: Bool
    var lines: [ServerMessage] = []
    var continuation: CheckedContinuation<Reply, any Error>?

    init(id: String, action: ReplyAction, allowance: Double, isPing: Bool = false, continuation: CheckedContinuation<Reply, any Error>?) {
        self.id = id
        self.action = action
        self.allowance = allowance
        self.isPing = isPing
        self.continuation = continuation
    }
}
