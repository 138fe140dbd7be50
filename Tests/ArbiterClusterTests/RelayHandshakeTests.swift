import Testing
@testable import ArbiterCluster

@Suite struct RelayHandshakeTests {
    let key = Array("the cluster key".utf8)
    let dialerNonce = [UInt8](repeating: 0x11, count: 32)
    let acceptorNonce = [UInt8](repeating: 0x22, count: 32)

    func dialer(key: [UInt8]? = nil, nonce: [UInt8]? = nil, expecting: String? = nil) -> RelayDialer {
        RelayDialer(node: "n2", key: key ?? self.key, nonce: nonce ?? dialerNonce, expectedPeer: expecting)
    }

    func acceptor(key: [UInt8]? = nil, nonce: [UInt8]? = nil) -> RelayAcceptor {
        RelayAcceptor(node: "n1", key: key ?? self.key, nonce: nonce ?? acceptorNonce)
    }

    /// Runs a whole handshake, each message delivered in the given chunking.
    func handshake(_ d: inout RelayDialer, _ a: inout RelayAcceptor, split: (([UInt8]) -> [[UInt8]]) = { [$0] }) throws(RelayError) -> (
        dialerSaw: String, acceptorSaw: String?, proof: [UInt8], challenge: [UInt8]
    ) {
        var challenge: [UInt8] = []
        for piece in split(d.hello) { challenge += try a.receive(piece).send }
        var step = RelayDialer.Step.needMore
        for piece in split(challenge) where step == .needMore { step = try d.receive(piece) }
        guard case .established(let peer, let proof, _) = step else { return ("", nil, [], challenge) }
        var accepted: String?
        for piece in split(proof) where accepted == nil { accepted = try a.receive(piece).peer }
        return (peer, accepted, proof, challenge)
    }

    @Test func bothSidesProveTheKeyAndLearnEachOthersNames() throws {
        var d = dialer(expecting: "n1")
        var a = acceptor()
        let result = try handshake(&d, &a)
        #expect(result.dialerSaw == "n1")
        #expect(result.acceptorSaw == "n2")
        let transcript = String(decoding: d.hello + result.challenge + result.proof, as: UTF8.self)
        #expect(!transcript.contains("the cluster key"))
        #expect(transcript.hasPrefix("RELAY-HELLO 1 n2 1111"))
    }

    @Test func everySplitOfEveryMessageGivesTheSameHandshake() throws {
        let whole = try { () throws(RelayError) in
            var d = dialer(); var a = acceptor()
            return try handshake(&d, &a)
        }()
        for cut in 1..<40 {
            var d = dialer()
            var a = acceptor()
            let result = try handshake(&d, &a) { bytes in
                cut < bytes.count ? [Array(bytes[..<cut]), Array(bytes[cut...])] : [bytes]
            }
            #expect(result.acceptorSaw == "n2" && result.proof == whole.proof, "cut at \(cut)")
        }
        var d = dialer()
        var a = acceptor()
        let bytewise = try handshake(&d, &a) { $0.map { [$0] } }
        #expect(bytewise.acceptorSaw == "n2" && bytewise.dialerSaw == "n1")
    }

    @Test func framesSentRightAfterTheProofAreHandedOnAsLeftover() throws {
        var d = dialer()
        var a = acceptor()
        let challenge = try a.receive(d.hello).send
        guard case .established(_, let proof, _) = try d.receive(challenge) else {
            Issue.record("no link")
            return
        }
        let frame = RelayFrameEncoder.encode(.sessionGone(origin: "n2", session: 7))
        let output = try a.receive(proof + frame)
        #expect(output.peer == "n2")
        #expect(output.leftover == frame)
        // Bytes fed to it after the link is up are handed back, never dropped.
        #expect(try a.receive(frame).leftover == frame)
    }

    @Test func anAcceptorWithAnotherKeyIsCaughtByTheDialer() throws {
        var d = dialer()
        var a = acceptor(key: Array("wrong".utf8))
        #expect(throws: RelayError.badProof) { try handshake(&d, &a) }
    }

    @Test func aDialerWithoutTheKeyIsRefusedByTheAcceptor() throws {
        // The impostor cannot check the challenge, so it skips that and guesses a proof.
        var a = acceptor()
        let impostor = RelayDialer(node: "evil", key: Array("guess".utf8), nonce: dialerNonce)
        _ = try a.receive(impostor.hello)
        let guessed = RelayProof.mac(
            key: Array("guess".utf8), role: "dialer", dialerNonce: dialerNonce, acceptorNonce: acceptorNonce, dialer: "evil", acceptor: "n1")
        #expect(throws: RelayError.badProof) { try a.receive(Array("RELAY-PROOF \(RelayProof.hex(guessed))\n".utf8)) }
    }

    @Test func aFlippedBitInEitherMacIsRefused() throws {
        var d = dialer()
        var a = acceptor()
        var challenge = try a.receive(d.hello).send
        let flip = challenge.count - 3  // inside the MAC's hex
        challenge[flip] = challenge[flip] == UInt8(ascii: "0") ? UInt8(ascii: "1") : UInt8(ascii: "0")
        #expect(throws: RelayError.badProof) { try d.receive(challenge) }

        var d2 = dialer()
        var a2 = acceptor()
        guard case .established(_, var proof, _) = try d2.receive(try a2.receive(d2.hello).send) else {
            Issue.record("no link")
            return
        }
        proof[proof.count - 2] = proof[proof.count - 2] == UInt8(ascii: "a") ? UInt8(ascii: "b") : UInt8(ascii: "a")
        #expect(throws: RelayError.badProof) { try a2.receive(proof) }
    }

    @Test func aRecordedHandshakeReplayedAgainstAFreshNonceIsRefused() throws {
        var d = dialer()
        var a = acceptor()
        let recorded = try handshake(&d, &a)
        // The attacker replays the dialer's side to an acceptor that drew a new nonce.
        var fresh = acceptor(nonce: [UInt8](repeating: 0x33, count: 32))
        _ = try fresh.receive(d.hello)
        #expect(throws: RelayError.badProof) { try fresh.receive(recorded.proof) }
        // And the acceptor's side to a dialer that drew a new nonce.
        var freshDialer = dialer(nonce: [UInt8](repeating: 0x44, count: 32))
        #expect(throws: RelayError.badProof) { try freshDialer.receive(recorded.challenge) }
    }

    @Test func aNonceReflectedBackOrOfTheWrongSizeIsRefused() throws {
        var a = acceptor()
        let mirrored = Array("RELAY-HELLO 1 n2 \(RelayProof.hex(acceptorNonce))\n".utf8)
        #expect(throws: RelayError.badNonce) { try a.receive(mirrored) }
        var a2 = acceptor()
        #expect(throws: RelayError.badNonce) { try a2.receive(Array("RELAY-HELLO 1 n2 abcd\n".utf8)) }
        // The acceptor's own challenge MAC reflected as a proof: the role differs.
        var a3 = acceptor()
        let challenge = try a3.receive(dialer().hello).send
        let mac = String(decoding: challenge, as: UTF8.self).split(separator: " ")[4].dropLast()
        #expect(throws: RelayError.badProof) { try a3.receive(Array("RELAY-PROOF \(mac)\n".utf8)) }
    }

    @Test func aPlainClientSendingRelayMessagesIsRefused() throws {
        var a = acceptor()
        #expect(throws: RelayError.self) { try a.receive(Array("JOIN demo\n".utf8)) }
        var a2 = acceptor()
        let frame = RelayFrameEncoder.encode(
            .command(RelayCommand(origin: "x", session: 1, sessionName: "s", key: nil, panel: "demo", command: [], arrivedAt: 0)))
        #expect(throws: RelayError.self) { try a2.receive(frame + [0x0A]) }
        var a3 = acceptor()
        _ = try a3.receive(dialer().hello)
        #expect(throws: RelayError.self) { try a3.receive(frame + [0x0A]) }
        #expect(RelayAcceptor.isRelay(firstBytes: dialer().hello))
        #expect(!RelayAcceptor.isRelay(firstBytes: Array("HELLO x\n".utf8)))
    }

    @Test func aTooLongHandshakeLineIsRefusedBeforeItIsKept() {
        var a = RelayAcceptor(node: "n1", key: key, nonce: acceptorNonce, limits: RelayLimits(maxHandshakeLineBytes: 64))
        #expect(throws: RelayError.lineTooLong(limit: 64)) { try a.receive([UInt8](repeating: 0x41, count: 64)) }
        var d = RelayDialer(node: "n2", key: key, nonce: dialerNonce, limits: RelayLimits(maxHandshakeLineBytes: 64))
        #expect(throws: RelayError.lineTooLong(limit: 64)) { try d.receive(Array(repeating: 0x41, count: 70) + [0x0A]) }
    }

    @Test func theDialerRefusesAKeyHolderThatIsNotTheNodeItDialled() throws {
        var d = dialer(expecting: "n3")
        var a = acceptor()
        #expect(throws: RelayError.unexpectedPeer(expected: "n3", found: "n1")) { try handshake(&d, &a) }
    }

    @Test func theAcceptorsRefusalReachesTheDialersLog() throws {
        var d = dialer()
        #expect(throws: RelayError.refusedByPeer("the peer's proof of the cluster key is wrong")) {
            try d.receive(RelayError.badProof.refusalLine)
        }
    }
}
