import ArbiterCore

/// The accepting side of a relay handshake (the leader node, on its normal port); see
/// `RelayDialer` for the exchange. Nothing but the handshake is accepted until the
/// dialer's proof checks out, so a plain client that sends relay messages is refused;
/// every refusal is a thrown `RelayError` whose `refusalLine` the server sends and logs.
public struct RelayAcceptor: Sendable {
    public struct Output: Equatable, Sendable {
        /// Bytes to send to the dialer.
        public var send: [UInt8] = []
        /// Set once the dialer proved the key: its node name and the first frame bytes.
        public var peer: String?
        public var leftover: [UInt8] = []
    }

    private enum State: Sendable {
        case awaitingHello
        case awaitingProof(dialer: String, dialerNonce: [UInt8])
        case established
    }

    public let node: String
    private let key: [UInt8]
    private let nonce: [UInt8]
    private var lines: RelayLineBuffer
    private var state = State.awaitingHello

    public init(node: String, key: [UInt8], nonce: [UInt8], limits: RelayLimits = .standard) {
        self.node = node
        self.key = key
        self.nonce = nonce
        self.lines = RelayLineBuffer(limit: limits.maxHandshakeLineBytes)
    }

    /// Whether a connection's first bytes are a relay handshake rather than a client's
    /// protocol: the server hands such a connection to a `RelayAcceptor`.
    public static func isRelay(firstBytes: some Collection<UInt8>) -> Bool {
        firstBytes.starts(with: "RELAY-".utf8)
    }

    public mutating func receive(_ bytes: some Collection<UInt8>) throws(RelayError) -> Output {
        var output = Output()
        guard case .established = state else {
            lines.append(bytes)
            while output.peer == nil, let line = try lines.nextLine() {
                try handle(line, into: &output)
            }
            return output
        }
        // Established: these are frame bytes; the caller should have switched to a
        // `RelayFrameDecoder`, and gets them back rather than losing them.
        output.leftover = Array(bytes)
        return output
    }

    private mutating func handle(_ line: Substring, into output: inout Output) throws(RelayError) {
        let words = line.split(separator: " ", omittingEmptySubsequences: false)
        switch state {
        case .awaitingHello:
            guard words.count == 4, words[0] == "RELAY-HELLO", words[1] == Substring(RelayProof.version) else {
                throw .notARelayPeer("expected RELAY-HELLO \(RelayProof.version)")
            }
            guard RelayProof.isNodeName(words[2]) else { throw .notARelayPeer("bad node name") }
            guard let theirNonce = RelayProof.bytes(hex: words[3]), theirNonce.count == RelayProof.nonceBytes, theirNonce != nonce else {
                throw .badNonce
            }
            let dialer = String(words[2])
            let mac = RelayProof.mac(key: key, role: "acceptor", dialerNonce: theirNonce, acceptorNonce: nonce, dialer: dialer, acceptor: node)
            output.send += Array("RELAY-CHALLENGE \(RelayProof.version) \(node) \(RelayProof.hex(nonce)) \(RelayProof.hex(mac))\n".utf8)
            state = .awaitingProof(dialer: dialer, dialerNonce: theirNonce)
        case .awaitingProof(let dialer, let dialerNonce):
            guard words.count == 2, words[0] == "RELAY-PROOF" else { throw .notARelayPeer("expected RELAY-PROOF") }
            let expected = RelayProof.mac(key: key, role: "dialer", dialerNonce: dialerNonce, acceptorNonce: nonce, dialer: dialer, acceptor: node)
            guard let presented = RelayProof.bytes(hex: words[1]), ConstantTime.equals(expected, presented) else { throw .badProof }
            state = .established
            output.peer = dialer
            output.leftover = lines.takeRest()
        case .established:
            break
        }
    }
}
