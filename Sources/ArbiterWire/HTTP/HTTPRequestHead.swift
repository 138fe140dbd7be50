/// A parsed HTTP/1.x request head: request line plus header fields, already validated.
///
/// Produced by ``HTTPRequestParser``. The parser has already refused heads whose framing is
/// ambiguous, so ``contentLength`` and ``isChunked`` can be trusted as they are.
public struct HTTPRequestHead: Sendable {
    /// The request method exactly as sent (methods are case-sensitive), e.g. `GET`.
    public var method: String
    /// The raw request-target, e.g. `/ws?panel=demo&name=al%20ice`.
    public var target: String
    /// The percent-decoded path of the target, e.g. `/ws`.
    public var path: String
    /// The percent-decoded query items in order (`+` decoded as space); names may repeat.
    public var queryItems: [(name: String, value: String)]
    /// The authority of an absolute-form target (`example.org:7070` of
    /// `GET http://example.org:7070/ HTTP/1.1`), which a server uses in place of `Host`
    /// (RFC 9112 3.2.2); nil for an origin-form target.
    public var authority: String?
    /// The major HTTP version (always 1 for heads from the parser).
    public var versionMajor: Int
    /// The minor HTTP version: 0 or 1 (a higher 1.x is kept as sent and treated like 1.1).
    public var versionMinor: Int
    /// The header fields in arrival order, names as sent, values without surrounding spaces.
    public var headers: [(name: String, value: String)]

    /// Builds a head in code (tests, internal redirects); the target is split leniently.
    public init(
        method: String,
        target: String,
        versionMajor: Int = 1,
        versionMinor: Int = 1,
        headers: [(name: String, value: String)] = []
    ) {
        let parsed = HTTPRequestTarget.lenient(target, method: method)
        self.init(
            method: method, target: target, parsedTarget: parsed,
            versionMajor: versionMajor, versionMinor: versionMinor, headers: headers)
    }

    init(
        method: String,
        target: String,
        parsedTarget: HTTPRequestTarget,
        versionMajor: Int,
        versionMinor: Int,
        headers: [(name: String, value: String)]
    ) {
        self.method = method
        self.target = target
        self.path = parsedTarget.path
        self.queryItems = parsedTarget.queryItems
        self.authority = parsedTarget.authority
        self.versionMajor = versionMajor
        self.versionMinor = versionMinor
        self.headers = headers
    }

    /// The first value of the header `name` (case-insensitive), or nil.
    public func header(_ name: String) -> String? {
        headers.first { HTTPSyntax.equalsIgnoringCase($0.name, name) }?.value
    }

    /// Every value of the header `name` (case-insensitive), in arrival order.
    public func headers(named name: String) -> [String] {
        headers.filter { HTTPSyntax.equalsIgnoringCase($0.name, name) }.map(\.value)
    }

    /// The comma-separated elements of every `name` header, trimmed and lowercased,
    /// e.g. `["keep-alive", "upgrade"]` for `Connection: keep-alive, Upgrade`.
    public func headerTokens(_ name: String) -> [String] {
        headers(named: name).flatMap(HTTPSyntax.tokenList)
    }

    /// The first value of the query item `name` (case-sensitive), or nil.
    public func queryValue(_ name: String) -> String? {
        queryItems.first { $0.name == name }?.value
    }

    /// Whether the connection may stay open after the response: HTTP/1.1 persists unless
    /// `Connection: close`; HTTP/1.0 only with `Connection: keep-alive` (RFC 9112 9.3).
    public var keepAlive: Bool {
        let tokens = headerTokens("Connection")
        if tokens.contains("close") { return false }
        if versionMajor == 1 && versionMinor == 0 { return tokens.contains("keep-alive") }
        return versionMajor >= 1
    }

    /// The declared body length, or nil when no `Content-Length` was sent.
    /// The parser has already verified that all `Content-Length` values agree.
    public var contentLength: Int? {
        let values = headers(named: "Content-Length").flatMap { $0.split(separator: ",") }
        guard let first = values.first else { return nil }
        return Int(HTTPSyntax.trimmed(first))
    }

    /// Whether the body is sent with `Transfer-Encoding: chunked`. The parser cannot find
    /// the end of such a body and discards the rest of the connection's input after the head,
    /// so the server should answer and close.
    public var isChunked: Bool {
        headerTokens("Transfer-Encoding").last == "chunked"
    }

    /// Whether a body follows the head (chunked or a non-zero `Content-Length`).
    public var hasBody: Bool {
        isChunked || (contentLength ?? 0) > 0
    }
}

extension HTTPRequestHead: Equatable {
    public static func == (lhs: HTTPRequestHead, rhs: HTTPRequestHead) -> Bool {
        lhs.method == rhs.method && lhs.target == rhs.target && lhs.path == rhs.path
            && lhs.versionMajor == rhs.versionMajor && lhs.versionMinor == rhs.versionMinor
            && lhs.queryItems.elementsEqual(rhs.queryItems) { $0 == $1 }
            && lhs.headers.elementsEqual(rhs.headers) { $0 == $1 }
    }
}
