/// The type byte of each relay frame. Fixed numbers: both ends of a link must agree on
/// them across versions, so a new message gets a new number and none is reused.
enum RelayFrameType {
    static let command: UInt8 = 1
    static let reply: UInt8 = 2
    static let event: UInt8 = 3
    static let sessionGone: UInt8 = 4
    static let snapshotRequest: UInt8 = 5
    static let snapshot: UInt8 = 6
    static let term: UInt8 = 7
    static let ping: UInt8 = 8
}
