/// The type byte of each relay frame. Fixed numbers: both ends of a link must agree on
/// them across versions, so a new message gets a new number and none is reused. 5, 6 and
/// 7 were a snapshot request, a snapshot and a term notice, never sent (a member's
/// snapshot is the reply to its relayed JOIN, and terms are read from etcd): removed, and
/// not to be reused.
enum RelayFrameType {
    static let command: UInt8 = 1
    static let reply: UInt8 = 2
    static let event: UInt8 = 3
    static let sessionGone: UInt8 = 4
    static let ping: UInt8 = 8
    static let stateQuery: UInt8 = 9
    static let stateAnswer: UInt8 = 10
    static let kick: UInt8 = 11
    static let kickAnswer: UInt8 = 12
    static let grantEnded: UInt8 = 13
    static let typedEvent: UInt8 = 14
}
