/// One guard of a transaction, as etcd's `Compare`: the transaction's success branch runs
/// only if every compare holds. On a missing key the revisions and version read as 0 and a
/// value compare fails, as in etcd.
public struct EtcdCompare: Equatable, Sendable {
    public enum Target: Equatable, Sendable {
        case createRevision(Int64)
        case modRevision(Int64)
        case version(Int64)
        case value([UInt8])
    }

    public enum Result: String, Equatable, Sendable {
        case equal = "EQUAL"
        case notEqual = "NOT_EQUAL"
        case greater = "GREATER"
        case less = "LESS"
    }

    public var key: [UInt8]
    public var target: Target
    public var result: Result

    public init(key: [UInt8], target: Target, result: Result = .equal) {
        self.key = key
        self.target = target
        self.result = result
    }

    public static func createRevision(_ key: String, _ result: Result = .equal, _ revision: Int64) -> EtcdCompare {
        EtcdCompare(key: Array(key.utf8), target: .createRevision(revision), result: result)
    }

    public static func modRevision(_ key: String, _ result: Result = .equal, _ revision: Int64) -> EtcdCompare {
        EtcdCompare(key: Array(key.utf8), target: .modRevision(revision), result: result)
    }

    public static func value(_ key: String, _ result: Result = .equal, _ value: String) -> EtcdCompare {
        EtcdCompare(key: Array(key.utf8), target: .value(Array(value.utf8)), result: result)
    }

    /// Whether the compare holds against `current` (nil: the key does not exist).
    public func holds(on current: EtcdKeyValue?) -> Bool {
        switch target {
        case .createRevision(let r): return compare(current?.createRevision ?? 0, r)
        case .modRevision(let r): return compare(current?.modRevision ?? 0, r)
        case .version(let v): return compare(current?.version ?? 0, v)
        case .value(let v):
            guard let current else { return false }
            switch result {
            case .equal: return current.value == v
            case .notEqual: return current.value != v
            case .greater: return v.lexicographicallyPrecedes(current.value)
            case .less: return current.value.lexicographicallyPrecedes(v)
            }
        }
    }

    private func compare(_ actual: Int64, _ expected: Int64) -> Bool {
        switch result {
        case .equal: actual == expected
        case .notEqual: actual != expected
        case .greater: actual > expected
        case .less: actual < expected
        }
    }
}
