import ArbiterServer
import ArbiterCluster

/// etcd stopping a panel's fence reservations while this node leads it (out of space,
/// refusing writes, an answer not understood). Presses past the block in hand wait for
/// the next one and are refused `ERROR unavailable` meanwhile; without this they were told
/// only that a block "is being reserved", for as long as etcd kept refusing, and the log
/// said nothing (found by hand: etcd at its space quota, its NOSPACE alarm raised).
struct FenceTrouble {
    /// What etcd said, as `EtcdError` describes it.
    var problem: String
    /// When it began and when it was last logged (monotonic ms).
    var since: Int64
    var loggedAt: Int64

    /// While it lasts, the log says so again this often: an operator reading the log at
    /// any time finds it.
    static let logEveryMs: Int64 = 30_000

    /// What is to be said of one reservation's outcome, given what was known before.
    enum Saying: Equatable {
        case nothing
        case trouble(String, Severity)
        case recovered(afterMs: Int64)
    }

    enum Severity: Equatable {
        case warning
        case error
    }

    /// Records one reservation's outcome (`failure` nil: it went through) in `known`.
    /// `refused`: etcd answered with an error (out of space, an answer not understood), and
    /// an operator has to act. Not answering is most often a moment's outage (an etcd
    /// member restarting, a majority regained within seconds), which the lease's own log
    /// lines report too: a warning until it has lasted `logEveryMs`.
    static func note(_ failure: String?, refused: Bool = true, now: Int64, in known: inout FenceTrouble?) -> Saying {
        guard let failure else {
            defer { known = nil }
            return known.map { .recovered(afterMs: now - $0.since) } ?? .nothing
        }
        guard var trouble = known else {
            known = FenceTrouble(problem: failure, since: now, loggedAt: now)
            return .trouble(failure, refused ? .error : .warning)
        }
        let due = trouble.problem != failure || now - trouble.loggedAt >= logEveryMs
        trouble.problem = failure
        if due { trouble.loggedAt = now }
        known = trouble
        let severity: Severity = refused || now - trouble.since >= logEveryMs ? .error : .warning
        return due ? .trouble(failure, severity) : .nothing
    }

    /// Whether etcd answered with `failure`, rather than not answering at all.
    static func isRefusal(_ failure: EtcdError) -> Bool {
        switch failure {
        case .unavailable: false
        case .leaseNotFound, .server, .malformed: true
        }
    }

    /// The operator's next step for what etcd said.
    static func hint(_ problem: String) -> String {
        EtcdRefusal.whatToDo(problem)
            ?? "check etcd (etcdctl endpoint status, etcdctl alarm list); the node asks again every half second while presses wait"
    }
}
