import ArbiterCore
import ArbiterWire

extension HTTPRouter {
    /// `GET /api/hooks`: each hook's pending count, last success and last failure with its
    /// reason, for the panels the bearer key is admin on. URLs may carry tokens of the
    /// receiver's, hence the admin level.
    func apiHooks(_ head: HTTPRequestHead, keepAlive: Bool, peer: String) -> [UInt8] {
        let headOnly = head.method == "HEAD"
        func reply(_ status: Int, _ contentType: String, _ body: String, _ extra: [(String, String)] = []) -> [UInt8] {
            HTTPResponse.serialize(
                status: status, headers: [("Content-Type", contentType), ("Cache-Control", "no-store")] + extra, body: Array(body.utf8),
                keepAlive: keepAlive, headOnly: headOnly)
        }
        let key = bearerKey(head)
        if let (why, seconds) = key.map({ server.checkKey($0, peer: peer) })?.notChecked {
            return reply(429, "text/plain; charset=utf-8", "\(why); no key is checked for \(seconds) s\n", [("Retry-After", "\(seconds)")])
        }
        let admin = Set(server.panels.filter { server.access(key: key, on: $0.config) >= .admin }.map(\.config.id))
        guard !admin.isEmpty else {
            return reply(401, "text/plain; charset=utf-8", "an admin key is required: Authorization: Bearer <key>\n", [("WWW-Authenticate", "Bearer")])
        }
        guard let hooks = server.hooks else { return reply(200, "application/json", #"{"hooks":[]}"#) }
        return reply(200, "application/json", String(decoding: HookMetrics.json(hooks, visible: admin.contains), as: UTF8.self))
    }
}
