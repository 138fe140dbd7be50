import ArbiterCore

/// The dialling side of a relay handshake (the follower node, opening a link to a leader
/// on its normal port):
///
///     dialer   -> RELAY-HELLO 1 <node> <nonce>
///     acceptor -> RELAY-CHALLENGE 1 <node> <nonce> <acceptor's MAC>
///     dialer   -> RELAY-PROOF <dialer's MAC>
///
/// Nonces and MACs in lowercase hex (`RelayProof`). The dialer checks the acceptor's MAC
/// before it sends its own, so a node that does not know the key learns nothing it could
/// reuse. The nonce is handed in (the caller draws it from the system's random source),
/// which keeps this pure and its tests deterministic.
public struct RelayDialer: Sendable {
    public enum Step: Equatable, Sendable {
        case needMore
        /// Send `proof`; the link is up. `leftover` is the first frame bytes, if any came.
        case established(peer: String, proof: [UInt8], leftover: [UInt8])
    }

    public let node: String
    private let key: [UInt8]
    private let nonce: [UInt8]
    private let expectedPeer: String?
    private var lines: RelayLineBuffer
    private var done = false

    public init(node: String, key: [UInt8], nonce: [UInt8], expectedPeer: String? = nil, limits: RelayLimits = .standard) {
        self.node = node
        self.key = key
        self.nonce = nonce
        self.expectedPeer = expectedPeer
        self.lines = RelayLineBuffer(limit: limits.maxHandshakeLineBytes)
    }

    public var hello: [UInt8] {
        Array("RELAY-HELLO \(RelayProof.version) \(node) \(RelayProof.hex(nonce))\n".utf8)
    }

    /// Feed what the acceptor sent until this returns `established`; after that, frame
    /// bytes belong to a `RelayFrameDecoder` (starting with `leftover`).
    public mutating func receive(_ bytes: some Collection<UInt8>) throws(RelayError) -> Step {
        guard !done else { return .needMore }
        lines.append(bytes)
        guard let line = try lines.nextLine() else { return .needMore }
        let words = line.split(separator: " ", omittingEmptySubsequences: false)
        if words.first == "RELAY-REFUSED" { throw .refusedByPeer(String(line.dropFirst("RELAY-REFUSED ".count))) }
        guard words.count == 5, words[0] == "RELAY-CHALLENGE", words[1] == Substring(RelayProof.version) else {
            throw .notARelayPeer("expected RELAY-CHALLENGE \(RelayProof.version)")
        }
        guard RelayProof.isNodeName(words[2]) else { throw .notARelayPeer("bad node name") }
        guard let theirNonce = RelayProof.bytes(hex: words[3]), theirNonce.count == RelayProof.nonceBytes, theirNonce != nonce else {
            throw .badNonce
        }
        let peer = String(words[2])
        let expected = RelayProof.mac(key: key, role: "acceptor", dialerNonce: nonce, acceptorNonce: theirNonce, dialer: node, acceptor: peer)
        guard let presented = RelayProof.bytes(hex: words[4]), ConstantTime.equals(expected, presented) else { throw .badProof }
        if let expectedPeer, expectedPeer != peer { throw .unexpectedPeer(expected: expectedPeer, found: peer) }
        done = true
        let mine = RelayProof.mac(key: key, role: "dialer", dialerNonce: nonce, acceptorNonce: theirNonce, dialer: node, acceptor: peer)
        return .established(peer: peer, proof: Array("RELAY-PROOF \(RelayProof.hex(mine))\n".utf8), leftover: lines.takeRest())
    }
}
