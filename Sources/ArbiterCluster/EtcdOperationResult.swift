/// The answer to one `EtcdOperation` of the branch a transaction ran.
public enum EtcdOperationResult: Equatable, Sendable {
    case put
    case delete(deleted: Int64)
    case range([EtcdKeyValue])
}
