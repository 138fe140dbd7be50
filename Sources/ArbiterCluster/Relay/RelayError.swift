/// Why a relay link is closed. Every case is logged by the server with the peer's address;
/// `refusalLine` is what the acceptor sends before closing during the handshake.
public enum RelayError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The peer does not speak the relay handshake (a plain client, or another version).
    case notARelayPeer(String)
    /// The peer's MAC is wrong: it does not know `--cluster-key`.
    case badProof
    /// The peer sent our own nonce back, or a nonce of the wrong size.
    case badNonce
    case lineTooLong(limit: Int)
    case frameTooLarge(size: Int, limit: Int)
    case malformedFrame(String)
    /// The acceptor refused us, with its reason.
    case refusedByPeer(String)
    /// The acceptor proved the key but is not the node we dialled.
    case unexpectedPeer(expected: String, found: String)

    public var description: String {
        switch self {
        case .notARelayPeer(let why): "not a relay peer: \(why)"
        case .badProof: "the peer's proof of the cluster key is wrong"
        case .badNonce: "the peer's nonce is unusable"
        case .lineTooLong(let limit): "handshake line longer than \(limit) bytes"
        case .frameTooLarge(let size, let limit): "relay frame of \(size) bytes, limit \(limit)"
        case .malformedFrame(let why): "malformed relay frame: \(why)"
        case .refusedByPeer(let why): "refused by the peer: \(why)"
        case .unexpectedPeer(let expected, let found): "dialled \(expected) but \(found) answered"
        }
    }

    /// The line an acceptor sends before closing, so the dialer's log says why.
    public var refusalLine: [UInt8] {
        Array("RELAY-REFUSED \(description)\n".utf8)
    }
}
