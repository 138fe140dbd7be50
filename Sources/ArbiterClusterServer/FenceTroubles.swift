import ArbiterCluster
import ArbiterIO
import ArbiterServer

/// The panels whose fence reservations etcd stops, while it does (`FenceTrouble`), and
/// what the operator reads of it: logged when etcd starts stopping them (and every 30 s
/// while it goes on), and when one goes through again. Any thread.
final class FenceTroubles: Sendable {
    private let table = Locked([String: FenceTrouble]())
    private let log: ServerLog

    init(log: ServerLog) { self.log = log }

    /// One fence reservation's outcome: logged when etcd starts stopping them (and every
    /// 30 s while it goes on), and when one goes through again.
    func note(_ panel: String, failure: EtcdError?) {
        let now = SystemClock.monotonic.milliseconds()
        let refused = failure.map(FenceTrouble.isRefusal) ?? false
        let saying = table.withLock { table in
            var known = table[panel]
            defer { table[panel] = known }
            return FenceTrouble.note(failure.map { "\($0)" }, refused: refused, now: now, in: &known)
        }
        switch saying {
        case .nothing:
            break
        case .trouble(let problem, let severity):
            let message = "this panel cannot reserve its next block of fences in etcd: its presses are refused ERROR unavailable until it can"
            let fields: KeyValuePairs<String, String> = ["panel": panel, "etcd": problem, "what_to_do": FenceTrouble.hint(problem)]
            switch severity {
            case .warning: log.warning(message, fields)
            case .error: log.error(message, fields)
            }
        case .recovered(let afterMs):
            log.info("fences reserved again; presses are taken again", ["panel": panel, "after_ms": "\(afterMs)"])
        }
    }

    /// What etcd said when it last stopped `panel`'s fence reservation, while it goes on.
    func problem(of panel: String) -> String? { table.withLock { $0[panel]?.problem } }

    /// How many panels' fence reservations etcd stops now (`/metrics`).
    var count: Int { table.withLock { $0.count } }
}
