/// Which `Host` and `Origin` values the server answers: the defence against DNS
/// rebinding (a hostile name resolving to this server) and against pages of other sites
/// opening WebSockets through a visitor's browser. Pure: the caller supplies the
/// machine's addresses and names.
public struct HostPolicy: Sendable, Equatable {
    /// Host names and address literals (lowercased, IPv6 without brackets) besides loopback.
    public private(set) var names: Set<String>
    /// Origins allowed to open a WebSocket besides the server's own (lowercased,
    /// `scheme://host[:port]`, or the literal `null`).
    public private(set) var origins: Set<String>

    public enum Verdict: Equatable, Sendable {
        case allowed
        /// HTTP/1.1 without `Host`, or with more than one (RFC 9112 3.2): 400.
        case missingHost
        case duplicateHost
        /// A name this server does not go by: 421.
        case foreignHost(String)
        /// A WebSocket from another site's page: 403.
        case foreignOrigin(String)
    }

    /// - Parameters:
    ///   - listenHost: the `--host` address; a specific one is allowed as a name.
    ///   - machineNames: the interface addresses and host name, used when `listenHost`
    ///     is a wildcard (`0.0.0.0`, `::`).
    ///   - allowedHosts: `--allow-host` values.
    ///   - allowedOrigins: `--allow-origin` values.
    public init(listenHost: String, machineNames: [String], allowedHosts: [String], allowedOrigins: [String]) {
        var names = Set<String>()
        let listen = HostPolicy.normalizedName(listenHost)
        if listen == "0.0.0.0" || listen == "::" {
            for name in machineNames { names.insert(HostPolicy.normalizedName(name)) }
        } else {
            names.insert(listen)
        }
        for name in allowedHosts { names.insert(HostPolicy.normalizedName(name)) }
        self.names = names
        self.origins = Set(allowedOrigins.map(HostPolicy.normalizedOrigin))
    }

    /// The decision for a request head; a WebSocket upgrade is `/ws` with `Upgrade`.
    ///
    /// A target in absolute form (`GET http://evil.example/api/panels`) names the host the
    /// request is for, and a server must go by it rather than by `Host` (RFC 9112 3.2.2),
    /// so that authority is what is checked; `Host` must still be there, once, in HTTP/1.1.
    public func check(_ head: HTTPRequestHead) -> Verdict {
        let hosts = head.headers(named: "Host")
        if hosts.count > 1 { return .duplicateHost }
        let webSocket = head.path == "/ws" && head.header("Upgrade") != nil
        var host = hosts.first
        if let authority = head.authority {
            if host == nil, head.versionMinor >= 1 { return .missingHost }
            host = authority
        }
        return check(versionMinor: head.versionMinor, host: host, origin: head.header("Origin"), isWebSocket: webSocket)
    }

    /// The decision for one request: its HTTP minor version, `Host`, and, for a
    /// WebSocket upgrade, its `Origin`.
    public func check(versionMinor: Int, host: String?, origin: String?, isWebSocket: Bool) -> Verdict {
        guard let host, !host.isEmpty else {
            // HTTP/1.0 clients may omit Host; browsers never do.
            return versionMinor >= 1 ? .missingHost : (isWebSocket ? checkOrigin(origin, host: nil) : .allowed)
        }
        guard let name = HostPolicy.name(ofAuthority: host), allows(name: name) else { return .foreignHost(host) }
        return isWebSocket ? checkOrigin(origin, host: host) : .allowed
    }

    /// Whether `name` (already normalized) is one of the server's.
    public func allows(name: String) -> Bool {
        HostPolicy.isLoopback(name) || names.contains(name)
    }

    private func checkOrigin(_ origin: String?, host: String?) -> Verdict {
        guard let origin else { return .allowed }
        let normalized = HostPolicy.normalizedOrigin(origin)
        if origins.contains(normalized) { return .allowed }
        // Same origin: the page came from this server under the name the request uses.
        if let host {
            let authority =
                normalized.hasPrefix("http://")
                ? normalized.dropFirst(7)
                : normalized.hasPrefix("https://") ? normalized.dropFirst(8) : nil
            if let authority, authority == host.lowercased()[...] { return .allowed }
        }
        return .foreignOrigin(origin)
    }

    // MARK: Parsing

    /// The host part of `host[:port]` or `[v6]:port`, normalized; nil when malformed.
    public static func name(ofAuthority authority: String) -> String? {
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            let rest = authority[authority.index(after: close)...]
            guard rest.isEmpty || (rest.hasPrefix(":") && isPort(rest.dropFirst())) else { return nil }
            let inner = authority[authority.index(after: authority.startIndex)..<close]
            return inner.isEmpty ? nil : normalizedName(String(inner))
        }
        let parts = authority.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count <= 2, let first = parts.first, !first.isEmpty else { return nil }
        if parts.count == 2, !isPort(parts[1]) { return nil }
        return normalizedName(String(first))
    }

    /// Lowercased, without brackets, an IPv6 zone or a final dot (`localhost.`).
    public static func normalizedName(_ name: String) -> String {
        var n = name.lowercased()
        if n.hasPrefix("["), n.hasSuffix("]") { n = String(n.dropFirst().dropLast()) }
        if let zone = n.firstIndex(of: "%") { n = String(n[..<zone]) }
        if n.hasSuffix("."), n.count > 1 { n.removeLast() }
        return n
    }

    static func normalizedOrigin(_ origin: String) -> String {
        var o = origin.lowercased()
        while o.hasSuffix("/") { o.removeLast() }
        return o
    }

    /// `localhost` (and names under it, RFC 6761), 127.0.0.0/8 and ::1.
    public static func isLoopback(_ name: String) -> Bool {
        if name == "localhost" || name.hasSuffix(".localhost") || name == "::1" || name == "0:0:0:0:0:0:0:1" { return true }
        let octets = name.split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4, octets[0] == "127" else { return false }
        return octets.allSatisfy { o in !o.isEmpty && o.count <= 3 && o.allSatisfy(\.isASCIIDigit) && (Int(o) ?? 256) <= 255 }
    }

    private static func isPort(_ text: Substring) -> Bool {
        text.isEmpty || (text.count <= 5 && text.allSatisfy(\.isASCIIDigit))
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
