/// A session waiting in line for a `queue` group, in arrival order.
struct Waiter: Sendable, Equatable {
    var session: SessionID
    var name: String
    var button: Int
}
