import ArbiterCluster

/// A failure below the etcd API, before it becomes an `EtcdError`.
enum EtcdClientFailure: Error {
    case socket(EtcdSocket.Failure)
    case http(HTTPResponseReader.Failure)
    case etcd(EtcdError)
}

extension EtcdSocket.Failure {
    var summary: String {
        switch self {
        case .connect(let why): why
        case .io(let why): why
        case .timeout: "timed out"
        }
    }
}

extension Error {
    /// Whether the member answered, if only with an error of etcd's: it is alive.
    var isAnswer: Bool {
        if let failure = self as? EtcdClientFailure, case .etcd = failure { return true }
        return false
    }

    /// The `EtcdError` the caller sees for a failed exchange with `endpoint`.
    func etcdError(endpoint: EtcdEndpoint, path: String, timeout: Int64) -> EtcdError {
        switch self {
        case let failure as EtcdSocket.Failure:
            switch failure {
            case .timeout: return .unavailable("\(endpoint) did not answer \(path) within \(timeout) ms")
            case .connect(let why), .io(let why): return .unavailable("\(endpoint) \(path): \(why)")
            }
        case let failure as EtcdClientFailure:
            switch failure {
            case .socket(let inner): return inner.etcdError(endpoint: endpoint, path: path, timeout: timeout)
            case .http(.malformed(let why)): return .unavailable("\(endpoint) \(path): \(why)")
            case .etcd(let error): return error
            }
        case let error as EtcdError:
            return error
        default:
            return .malformed("\(endpoint) \(path): \(self)")
        }
    }
}
