import ArbiterCore

/// One line of a relayed event frame (`RelayMessage.typedEvent`): what a following node
/// must know of it, as fields, and the bytes its members receive in each form, rendered
/// once by the leader. A follower acts on `fact` and passes `text` or `json` on as they are.
public struct RelayEventLine: Equatable, Sendable {
    /// What a follower keeps track of: grants (to end them at a failover, to answer a
    /// session's UP after one) and members that left.
    public enum Fact: Equatable, Sendable {
        /// Nothing a follower tracks.
        case plain
        /// `PRESSED`: `owner` (session `session`) holds `button` (its index in the panel,
        /// which every node's config agrees on) at `fence`.
        case granted(button: Int, owner: String, session: UInt64, fence: UInt64)
        /// `RELEASED`: the grant of `button` at `fence` ended for `reason`.
        case released(button: Int, fence: UInt64, reason: ReleaseReason)
        /// `LEFT`: session `session` is no longer a member.
        case left(session: UInt64)
    }

    public var fact: Fact
    public var text: [UInt8]
    public var json: [UInt8]

    public init(fact: Fact, text: [UInt8], json: [UInt8]) {
        self.fact = fact
        self.text = text
        self.json = json
    }
}
