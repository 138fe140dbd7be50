import ArbiterIO
import Glibc

/// The IP address of a relay connection's source, or of a node's advertised address, as
/// bytes: an accepted peer (`10.0.0.7:51234`, `[fd00::7]:51234`) and an advertised address
/// (`10.0.0.7:7070`, `[fd00:0::7]:7070`, `localhost:7070`) can spell one machine
/// differently, and the handshake bounds (`RelayHandshakeSlots`) must see it as one.
/// Names are not resolved, as everywhere else in the server.
struct RelayPeerAddress: Hashable, Sendable {
    /// 4 bytes for IPv4 (an IPv4-mapped IPv6 address included), 16 for IPv6.
    let bytes: [UInt8]

    /// `host:port`, as `Sys.accept` writes a peer or `--advertise` gives a node.
    init?(hostPort: String) {
        guard let address = RelayAddress(hostPort), let literal = HostLiteral(address.host) else { return nil }
        if literal.isIPv6 {
            var v6 = in6_addr()
            guard inet_pton(AF_INET6, literal.address, &v6) == 1 else { return nil }
            let b = withUnsafeBytes(of: v6) { Array($0) }
            // What a dual-stack listener accepts from an IPv4 peer; `Sys.accept` already
            // writes it as IPv4, an advertised address might not.
            let mapped = b[0..<10].allSatisfy { $0 == 0 } && b[10] == 0xFF && b[11] == 0xFF
            bytes = mapped ? Array(b[12...]) : b
        } else {
            var v4 = in_addr()
            guard inet_pton(AF_INET, literal.address, &v4) == 1 else { return nil }
            bytes = withUnsafeBytes(of: v4) { Array($0) }
        }
    }

    /// What the bound per source counts by: the address for IPv4; for IPv6 its /64, since
    /// a machine given a /64 may take any address in it, one per connection.
    var source: [UInt8] { bytes.count == 16 ? Array(bytes[..<8]) : bytes }
}
