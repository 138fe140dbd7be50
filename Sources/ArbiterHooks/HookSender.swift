import ArbiterWire

/// One POST: where, the Standard Webhooks headers, the body.
public struct HookRequest: Sendable {
    public var url: HookURL
    public var headers: [(String, String)]
    public var body: [UInt8]

    public init(url: HookURL, headers: [(String, String)], body: [UInt8]) {
        self.url = url
        self.headers = headers
        self.body = body
    }
}

/// Sends one request and tells how it went, once, from any thread, within `timeoutMs`
/// of the call whatever the receiver does.
public protocol HookSender: Sendable {
    func send(_ request: HookRequest, timeoutMs: Int64, done: @escaping @Sendable (HookOutcome) -> Void)
}

/// The sender for a URL: our own HTTP/1.1 client for `http://`, URLSession for `https://`.
public func hookSender(for url: HookURL) -> any HookSender {
    url.secure ? URLSessionSender() : PlainHTTPSender()
}
