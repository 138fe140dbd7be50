/// One request inside a transaction branch (etcd's `RequestOp`).
public enum EtcdOperation: Equatable, Sendable {
    /// Put `value` at `key`, attached to `lease` (0: no lease).
    case put(key: [UInt8], value: [UInt8], lease: Int64)
    case delete(EtcdKeyRange)
    case range(EtcdKeyRange)

    public static func put(_ key: String, _ value: String, lease: Int64 = 0) -> EtcdOperation {
        .put(key: Array(key.utf8), value: Array(value.utf8), lease: lease)
    }

    public static func delete(_ key: String) -> EtcdOperation {
        .delete(.key(key))
    }

    public static func range(_ key: String) -> EtcdOperation {
        .range(.key(key))
    }
}
