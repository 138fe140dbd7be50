/// Whether a starting node may use its `--node` name. Two live processes under one name
/// would overwrite each other's registration and take each other for a restart of the
/// other (every relayed frame of one run ends the other run's sessions), so a second one
/// is refused at start. A registration left by a process of this name that died lapses
/// with its lease within the TTL, so one at another address is waited for that long
/// first; one at this node's own address is an earlier run of this very node (restarted
/// at once after a crash) and is no obstacle.
public enum NodeNameCheck {
    public enum Verdict: Equatable, Sendable {
        case free
        case wait
        case inUse(address: String)
    }

    /// `registered`: the address under `/arbiter/nodes/<name>` now, if any; `waited`: how
    /// long this start has been waiting for it to lapse.
    public static func verdict(registered: String?, advertise: String, waitedMilliseconds: Int64, ttlSeconds: Int64) -> Verdict {
        guard let registered, registered != advertise else { return .free }
        return waitedMilliseconds < lapseMilliseconds(ttlSeconds: ttlSeconds) ? .wait : .inUse(address: registered)
    }

    /// The TTL and one second more: a dead process's key is gone by then.
    public static func lapseMilliseconds(ttlSeconds: Int64) -> Int64 { ttlSeconds * 1_000 + 1_000 }
}
