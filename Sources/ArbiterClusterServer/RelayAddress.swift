/// A node's advertised address, `host:port` (`10.0.0.11:7070`, `[::1]:7070`), split for
/// `Sys.connect`. Names are not resolved, as everywhere else in the server.
struct RelayAddress: Equatable, Sendable {
    let host: String
    let port: UInt16

    init?(_ text: String) {
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]), port > 0 else { return nil }
        let host = String(text[..<colon])
        // An IPv6 literal must be bracketed, or its last group would pass for the port.
        guard !host.isEmpty, !host.contains(":") || (host.hasPrefix("[") && host.hasSuffix("]")) else { return nil }
        self.host = host
        self.port = port
    }
}
