/// Why a call to etcd did not give an answer the cluster can act on.
///
/// `unavailable` is the one the server turns into `ERROR unavailable`: no endpoint answered
/// in time, or etcd itself has no majority. The others are answers.
public enum EtcdError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No endpoint answered within the call's timeout, or etcd reported it cannot serve.
    case unavailable(String)
    /// The lease is gone: expired or revoked.
    case leaseNotFound
    /// etcd answered with an error that is not one of the above.
    case server(code: Int64, message: String)
    /// An answer that does not have the shape etcd's gateway gives.
    case malformed(String)

    public var description: String {
        switch self {
        case .unavailable(let why): "etcd unavailable: \(why)"
        case .leaseNotFound: "etcd: requested lease not found"
        case .server(let code, let message): "etcd error \(code): \(message)"
        case .malformed(let why): "etcd answer not understood: \(why)"
        }
    }
}
