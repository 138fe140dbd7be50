/// One etcd member's client URL, `http://host:port`. Plain HTTP only: between machines,
/// put the gateway behind a TLS tunnel (docs/CLUSTER.md).
public struct EtcdEndpoint: Equatable, Sendable, CustomStringConvertible {
    public var host: String
    public var port: UInt16

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// Parses `http://host:port` (IPv6 hosts in brackets), or says what is wrong with it.
    public static func parse(_ text: String) -> Result<EtcdEndpoint, EndpointError> {
        guard text.hasPrefix("http://") else {
            return .failure(
                EndpointError(
                    text: text, reason: text.hasPrefix("https://") ? "https is not supported; use a TLS tunnel and http to it" : "must start with http://"))
        }
        var rest = Substring(text.dropFirst("http://".count))
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        // etcd's client URL has no path (the gateway's paths are fixed, `/v3/...`); said so
        // rather than reading `2379/v3` as a bad port.
        if let slash = rest.firstIndex(of: "/"), !rest[..<slash].isEmpty {
            return .failure(EndpointError(text: text, reason: "takes no path, only http://host:port"))
        }
        let host: Substring
        let portText: Substring
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return .failure(EndpointError(text: text, reason: "unclosed [ in the host")) }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            guard after.hasPrefix(":") else { return .failure(EndpointError(text: text, reason: "needs a :port")) }
            portText = after.dropFirst()
        } else {
            guard let colon = rest.lastIndex(of: ":") else { return .failure(EndpointError(text: text, reason: "needs a :port")) }
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
        }
        guard !host.isEmpty, !host.contains("/") else { return .failure(EndpointError(text: text, reason: "needs a host")) }
        guard let port = UInt16(portText), port > 0 else { return .failure(EndpointError(text: text, reason: "the port must be 1-65535")) }
        return .success(EtcdEndpoint(host: String(host), port: port))
    }

    /// Parses a comma-separated list, as `--cluster` takes it.
    public static func parseList(_ text: String) -> Result<[EtcdEndpoint], EndpointError> {
        var out: [EtcdEndpoint] = []
        // Spaces around the commas (`a:2379, b:2379`, pasted from a document) are not part
        // of a URL.
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            switch parse(part.trimmingSpaces) {
            case .success(let endpoint): out.append(endpoint)
            case .failure(let error): return .failure(error)
            }
        }
        return .success(out)
    }

    public var description: String { host.contains(":") ? "http://[\(host)]:\(port)" : "http://\(host):\(port)" }

    /// The Host header's value.
    var authority: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
