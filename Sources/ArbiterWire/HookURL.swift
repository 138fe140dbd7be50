/// A hook's `url`, split for a request of our own: only `http://` and `https://`, no
/// user name or password (they would travel in clear and end up in logs), no fragment.
public struct HookURL: Sendable, Equatable {
    public var secure: Bool
    /// As written, without brackets around an IPv6 literal.
    public var host: String
    public var port: Int
    /// Path and query, from the first `/`; `/` when the URL has none.
    public var target: String
    /// The `Host` header: the authority as written.
    public var authority: String

    /// The URL, or why it cannot be used.
    public static func parse(_ text: String) -> Result<HookURL, HookURLFailure> {
        let secure: Bool
        let rest: Substring
        if text.hasPrefix("http://") {
            secure = false
            rest = text.dropFirst(7)
        } else if text.hasPrefix("https://") {
            secure = true
            rest = text.dropFirst(8)
        } else {
            return .failure(HookURLFailure(reason: "must start with http:// or https://"))
        }
        guard text.utf8.count <= 2000 else { return .failure(HookURLFailure(reason: "must be at most 2000 bytes")) }
        guard !text.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value >= 0x7F }) else {
            return .failure(HookURLFailure(reason: "must be printable ASCII without spaces (percent-encode the rest)"))
        }
        guard !text.contains("#") else { return .failure(HookURLFailure(reason: "must not have a fragment (#)")) }
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        var target = String(rest[authorityEnd...])
        if target.isEmpty || target.hasPrefix("?") { target = "/" + target }
        guard !authority.contains("@") else { return .failure(HookURLFailure(reason: "must not carry a user name or password")) }
        var host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return .failure(HookURLFailure(reason: "has an unclosed [")) }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return .failure(HookURLFailure(reason: "has something after ] that is not a port")) }
                portText = after.dropFirst()
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            host = authority
        }
        guard !host.isEmpty else { return .failure(HookURLFailure(reason: "has no host")) }
        var port = secure ? 443 : 80
        if let portText {
            guard let n = Int(portText), (1...65535).contains(n) else { return .failure(HookURLFailure(reason: "has a port that is not 1 to 65535")) }
            port = n
        }
        return .success(HookURL(secure: secure, host: String(host), port: port, target: target, authority: String(authority)))
    }
}

/// Why a hook's `url` cannot be used.
public struct HookURLFailure: Error, Equatable {
    public var reason: String
}
