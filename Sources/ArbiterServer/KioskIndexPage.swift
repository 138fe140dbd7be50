import ArbiterCore

/// The kiosk index (`GET /`) with the panel list written into its HTML, so its links work
/// without JavaScript and before `/api/panels` answers; index.js then keeps the list
/// current (member counts, held buttons) in place.
struct KioskIndexPage {
    /// Where index.html wants the list: the inside of `<ul id="panels">`.
    static let marker: [UInt8] = Array("<!--panels-->".utf8)

    let server: ServerState

    func render(template: [UInt8]) -> [UInt8] {
        guard let at = ByteSearch.start(of: Self.marker, in: template[...]) else { return template }
        return Array(template[..<at]) + Array(items().utf8) + Array(template[(at + Self.marker.count)...])
    }

    /// One `<li>` per panel, the same markup index.js builds. Only the configuration is
    /// read, and in cluster mode each panel's leader (its queue entered for that alone): a
    /// private panel is named as /api/panels names it.
    func items() -> String {
        guard !server.panels.isEmpty else { return "<li>This server has no panels.</li>" }
        var html = ""
        for host in server.panels {
            let config = host.config
            let id = Self.escape(config.id)
            var meta =
                server.access(key: nil, on: config) < .view
                ? "\(id) · needs a view key"
                : "\(id) · \(config.buttons.count) button\(config.buttons.count == 1 ? "" : "s")"
            if server.access(key: nil, on: config) >= .view, let leader = leader(of: host) { meta += " · led by \(Self.escape(leader))" }
            html +=
                "<li data-panel=\"\(id)\"><a class=\"panel-link\" href=\"/panel/\(id)\">"
                + "<span class=\"panel-title\">\(Self.escape(config.title))</span>"
                + "<span class=\"panel-meta\">\(meta)</span></a></li>"
        }
        return html
    }

    /// The node leading the panel as this node saw it (cluster mode), as /api/panels has it.
    private func leader(of host: PanelHost) -> String? {
        guard let role = host.role else { return nil }
        return host.queue.sync { role.leaderNode }
    }

    /// Text for HTML element content and double-quoted attribute values.
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
