/// Makes `webhook-id`s. A panel's seq alone is not unique for all time: it starts again
/// at 1 when the process does, and without a journal fences do too. So each process
/// picks a random incarnation at start, and an id is `<incarnation>_<panel>_<seq>`:
/// never made twice by two processes (64 random bits), never twice by one (seq grows).
/// A delivery keeps the id it was made with: it is stored with it (`HookStore`), so a
/// retry after a restart carries the same one.
public struct WebhookID: Sendable {
    public let incarnation: String

    public init(incarnation: String) {
        self.incarnation = incarnation
    }

    /// A fresh random incarnation.
    public static func random() -> WebhookID {
        var rng = SystemRandomNumberGenerator()
        let bits = rng.next() as UInt64
        let hex = String(bits, radix: 16)
        return WebhookID(incarnation: "arb" + String(repeating: "0", count: 16 - hex.count) + hex)
    }

    /// The id of the event `seq` of `panel` (panel ids have no `.`, and the seq is last).
    public func make(panel: String, seq: UInt64) -> String { "\(incarnation)_\(panel)_\(seq)" }

    /// In a cluster a panel's seq starts again at each term, and one process may lead it
    /// in several: the term (etcd's revision of the election, never repeated) goes in too.
    public func make(panel: String, term: Int64?, seq: UInt64) -> String {
        guard let term else { return make(panel: panel, seq: seq) }
        return "\(incarnation)_\(panel)_\(term)_\(seq)"
    }
}
