import ArbiterCore
import ArbiterWire

/// Answers the plain HTTP requests of PROTOCOL.md section 7 (the WebSocket upgrade is
/// the reactor's).
struct HTTPRouter {
    let server: ServerState

    /// `peer` is the client's address, for its budget of wrong keys.
    func response(to head: HTTPRequestHead, keepAlive: Bool, peer: String) -> [UInt8] {
        let headOnly = head.method == "HEAD"
        func reply(_ status: Int, _ contentType: String, _ body: [UInt8], _ extra: [(String, String)] = []) -> [UInt8] {
            HTTPResponse.serialize(
                status: status, headers: [("Content-Type", contentType)] + extra,
                body: body, keepAlive: keepAlive, headOnly: headOnly)
        }
        func text(_ status: Int, _ message: String, _ extra: [(String, String)] = []) -> [UInt8] {
            reply(status, "text/plain; charset=utf-8", Array((message + "\n").utf8), extra)
        }
        guard head.method == "GET" || headOnly else {
            return text(405, "only GET and HEAD are served", [("Allow", "GET, HEAD")])
        }
        let path = head.path
        switch path {
        case "/", "/index.html":
            guard let file = KioskFiles.shared.file(named: "index.html") else { return text(404, "no kiosk index") }
            let page = KioskIndexPage(server: server).render(template: file.bytes)
            return reply(200, file.contentType, page, [("Cache-Control", "no-cache")])
        case "/healthz":
            return text(200, "ok")
        case "/metrics":
            return reply(200, "text/plain; version=0.0.4; charset=utf-8", Array(MetricsPage(server: server).render().utf8))
        case "/api/panels":
            switch panels(head, keepAlive: keepAlive, peer: peer, askLeaders: false) {
            case .now(let response): return response
            case .later(let entries): return panelsResponse(entries.map(\.localJSON), keepAlive: keepAlive, headOnly: headOnly)
            }
        case "/api/hooks":
            return apiHooks(head, keepAlive: keepAlive, peer: peer)
        case "/api/nodes":
            return reply(200, "application/json", apiNodes(), [("Cache-Control", "no-store")])
        case "/ws":
            return text(426, "this is the WebSocket endpoint: connect with Upgrade: websocket", [("Upgrade", "websocket")])
        default:
            break
        }
        if path.hasPrefix("/panel/") {
            let id = String(path.dropFirst("/panel/".count))
            guard server.panelsByID[id] != nil else { return text(404, "no panel \(id)") }
            return asset("panel.html", reply) ?? text(404, "no kiosk page")
        }
        if path.hasPrefix("/kiosk/") {
            let name = String(path.dropFirst("/kiosk/".count))
            if let response = asset(name, reply) { return response }
        }
        return text(404, "not found: \(path)")
    }

    private func asset(_ name: String, _ reply: (Int, String, [UInt8], [(String, String)]) -> [UInt8]) -> [UInt8]? {
        guard let file = KioskFiles.shared.file(named: name) else { return nil }
        return reply(200, file.contentType, file.bytes, [("Cache-Control", "no-cache")])
    }

    /// The key of `Authorization: Bearer <key>`, as a kiosk that was given one sends it.
    func bearerKey(_ head: HTTPRequestHead) -> String? {
        guard let value = head.header("Authorization") else { return nil }
        let parts = value.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let key = parts[1].trimmingCharacters(in: .whitespaces)
        return key.isEmpty ? nil : key
    }

    /// The nodes a kiosk may fail over to: `{"self":"n1","nodes":[{"node":..,"address":..}]}`
    /// sorted by name; on a single node `{"self":null,"nodes":[]}`.
    private func apiNodes() -> [UInt8] {
        guard let cluster = server.cluster else { return Array(#"{"self":null,"nodes":[]}"#.utf8) }
        var out: [UInt8] = Array(#"{"self":"#.utf8)
        JSONString.append(cluster.node, to: &out)
        out += Array(#","nodes":["#.utf8)
        for (i, entry) in cluster.nodes().enumerated() {
            var j = JSONObjectWriter()
            j.string("node", entry.node)
            j.string("address", entry.address)
            if i > 0 { out.append(UInt8(ascii: ",")) }
            out += Array(j.finish().utf8)
        }
        out += Array("]}".utf8)
        return out
    }

    /// One panel's entry of `GET /api/panels`: its JSON, or (cluster mode) the leader to
    /// ask for it, with this node's own view for when no answer comes.
    enum PanelEntry {
        case ready([UInt8])
        case leader(String, address: String?, panel: String, local: [UInt8])

        var localJSON: [UInt8] {
            switch self {
            case .ready(let json), .leader(_, _, _, let json): json
            }
        }
    }

    enum PanelsResponse {
        /// The whole response.
        case now([UInt8])
        /// Entries to complete first: some panels are led by other nodes (`LeaderStateGather`).
        case later([PanelEntry])
    }

    /// `GET /api/panels`. Every panel and button state, each panel read on its own queue;
    /// with `askLeaders`, a panel another node leads is left to ask that node, since this
    /// node's view of it is empty. A panel whose view level needs a key the request did not
    /// bring (`Authorization: Bearer <key>`) is only named, as JOIN without the key is
    /// refused. In cluster mode every other panel carries its leader (`withLeader`).
    func panels(_ head: HTTPRequestHead, keepAlive: Bool, peer: String, askLeaders: Bool) -> PanelsResponse {
        let headOnly = head.method == "HEAD"
        let key = bearerKey(head)
        if let (why, seconds) = key.map({ server.checkKey($0, peer: peer) })?.notChecked {
            return .now(
                HTTPResponse.serialize(
                    status: 429, headers: [("Content-Type", "text/plain; charset=utf-8"), ("Retry-After", "\(seconds)")],
                    body: Array("\(why); no key is checked for \(seconds) s\n".utf8), keepAlive: keepAlive,
                    headOnly: headOnly))
        }
        var entries: [PanelEntry] = []
        for host in server.panels {
            if server.access(key: key, on: host.config) < .view {
                var j = JSONObjectWriter()
                j.string("id", host.config.id)
                j.string("title", host.config.title)
                j.raw("private", "true")
                j.raw("buttons", "[]")
                entries.append(.ready(Array(j.finish().utf8)))
                continue
            }
            entries.append(
                host.queue.sync {
                    var json = host.stateJSON()
                    guard let role = host.role else { return .ready(json) }
                    json = Self.withLeader(role.leaderNode, json)
                    guard askLeaders, !role.decides, let leader = role.leaderElsewhere else { return .ready(json) }
                    return .leader(leader.node, address: leader.address, panel: host.config.id, local: json)
                })
        }
        if entries.contains(where: { if case .leader = $0 { true } else { false } }) { return .later(entries) }
        return .now(panelsResponse(entries.map(\.localJSON), keepAlive: keepAlive, headOnly: headOnly))
    }

    /// A panel's JSON object with `"leader"` added: the node leading it as this node saw it
    /// when the request came, or null while none is known. Added here rather than by
    /// `stateJSON`, so that a leader's answer and this node's own view carry the same
    /// field once, whatever version the leader runs.
    static func withLeader(_ leader: String?, _ object: [UInt8]) -> [UInt8] {
        guard object.last == UInt8(ascii: "}") else { return object }
        var out = Array(object.dropLast())
        out += Array(#","leader":"#.utf8)
        if let leader { JSONString.append(leader, to: &out) } else { out += Array("null".utf8) }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// The response of `GET /api/panels` with every panel's JSON object, in order.
    func panelsResponse(_ objects: [[UInt8]], keepAlive: Bool, headOnly: Bool) -> [UInt8] {
        var out = Array(#"{"panels":["#.utf8)
        for (i, object) in objects.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            out += object
        }
        out += Array("]}".utf8)
        return HTTPResponse.serialize(
            status: 200, headers: [("Content-Type", "application/json"), ("Cache-Control", "no-store")], body: out, keepAlive: keepAlive,
            headOnly: headOnly)
    }
}

/// The embedded kiosk files, decoded once.
final class KioskFiles: Sendable {
    static let shared = KioskFiles()

    struct File: Sendable {
        var contentType: String
        var bytes: [UInt8]
    }

    private let files: [String: File]

    private init() {
        var files: [String: File] = [:]
        for (name, entry) in KioskAssets.files {
            files[name] = File(contentType: entry.contentType, bytes: Base64.decode(entry.base64) ?? [])
        }
        self.files = files
    }

    func file(named name: String) -> File? { files[name] }
}
