/// One event to be POSTed to one hook: its body and the id that stays the same on
/// every attempt and after a restart.
public struct HookDelivery: Sendable, Equatable {
    /// The `webhook-id` (`WebhookID`).
    public var id: String
    /// The event's seq on its panel, for logs.
    public var seq: UInt64
    /// The JSON object POSTed, `"time"` included.
    public var body: [UInt8]
    /// When the event was decided, on the wall clock: its age survives a restart.
    public var createdWallMs: Int64

    public init(id: String, seq: UInt64, body: [UInt8], createdWallMs: Int64) {
        self.id = id
        self.seq = seq
        self.body = body
        self.createdWallMs = createdWallMs
    }
}
