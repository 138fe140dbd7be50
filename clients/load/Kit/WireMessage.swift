/// One server message reduced to the numbers the generator and the checker need.
///
/// Fields a message does not carry keep their "absent" values (-1, `.none`, false).
/// Built in place by `LineMessageParser` or `JSONMessageParser` from the same wire
/// message, so text and JSON peers must decode to equal values.
public struct WireMessage: Sendable, Equatable {
    public var kind: MessageKind = .unknown
    /// Index in the `ButtonTable`; -1 when absent or unknown.
    public var button: Int32 = -1
    public var fence: Int64 = -1
    public var seq: Int64 = -1
    /// The `session=` number (`s7` is 7).
    public var session: Int64 = -1
    /// `owner=` or `name=` as a name code (see `ByteText.nameCode`).
    public var owner: Int64 = -1
    /// `reason=` (events, DENIED) or `ended=` (OK UP/CANCEL).
    public var reason: ReasonCode = .none
    /// PROGRESS `value=` in thousandths.
    public var permille: Int32 = -1
    public var heldMs: Int64 = -1
    public var discarded = false
    public var members: Int64 = -1
    /// `term=` of a cluster node's snapshot (`OK JOIN`): which leader's reign it shows.
    public var term: Int64 = -1
    /// BUTTON `state=`.
    public var state: ButtonState = .unknown
    /// ROUND `state=`.
    public var round: RoundState = .unknown
    /// ERROR's code.
    public var error: WireErrorCode = .none
    /// An `ERROR unavailable` that says its command "may or may not have been done": a
    /// relayed command whose leader died before it answered (cluster mode).
    public var mayHaveBeenDone = false
    /// QUEUED/DEQUEUED `position=`, RANKED/BUZZED `rank=` and `after_us=`.
    public var position: Int32 = -1
    public var rank: Int32 = -1
    public var afterUs: Int64 = -1
    /// ARMED/CLOSED/ROUND: the group's index in the `ButtonTable`; -1 when absent or unknown.
    public var group: Int32 = -1

    public init() {}

    /// What the server's text says of a command whose outcome it cannot know.
    static let mayHaveBeenDoneText: StaticString = "may or may not have been done"

    public init(kind: MessageKind) {
        self.kind = kind
    }
}
