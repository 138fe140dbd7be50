/// `host:port`, `[v6]:port`, or a bare host (port 7070).
struct HostAddress: Sendable, Equatable, CustomStringConvertible {
    let host: String
    let port: UInt16

    init?(_ text: String) {
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            if rest.isEmpty {
                port = 7070
            } else {
                guard rest.hasPrefix(":"), let p = UInt16(rest.dropFirst()) else { return nil }
                port = p
            }
        } else if let colon = text.lastIndex(of: ":"), text.firstIndex(of: ":") == colon {
            host = String(text[..<colon])
            guard let p = UInt16(text[text.index(after: colon)...]) else { return nil }
            port = p
        } else {
            host = text
            port = 7070
        }
        guard !host.isEmpty else { return nil }
    }

    var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
