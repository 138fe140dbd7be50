/// Why a `--cluster` endpoint cannot be used, naming it.
public struct EndpointError: Error, Equatable, Sendable, CustomStringConvertible {
    public var text: String
    public var reason: String
    public var description: String { "etcd endpoint \"\(text)\": \(reason)" }
}
