import CSystem

/// An address as the command lines take it: an IPv4 or IPv6 literal, `[v6]` as in a
/// URL, or `localhost`. Names are not resolved: the server listens on an address, and
/// the generator only talks to loopback and LAN test hosts given by address.
public struct HostLiteral: Equatable, Sendable {
    /// The literal to connect to (IPv6 without brackets).
    public let address: String
    public let isIPv6: Bool

    public init?(_ text: String) {
        var host = text
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host == "localhost" { host = "127.0.0.1" }
        switch cs_ip_literal_version(host) {
        case 4: isIPv6 = false
        case 6: isIPv6 = true
        default: return nil
        }
        address = host
    }

    /// `host:port` as a Host header or a message writes it: IPv6 in brackets.
    public func authority(port: UInt16) -> String {
        isIPv6 ? "[\(address)]:\(port)" : "\(address):\(port)"
    }

    /// The same for a host that may not be a literal (written as given then).
    public static func authority(_ host: String, port: UInt16) -> String {
        HostLiteral(host)?.authority(port: port) ?? "\(host):\(port)"
    }
}
