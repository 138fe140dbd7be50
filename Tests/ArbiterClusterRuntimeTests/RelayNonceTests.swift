import ArbiterCluster
import ArbiterClusterRuntime
import Testing

@Suite struct RelayNonceTests {
    @Test func noncesHaveTheHandshakesSizeAndDoNotRepeat() throws {
        let nonces = (0..<100).map { _ in RelayNonce.draw() }
        #expect(nonces.allSatisfy { $0.count == RelayProof.nonceBytes })
        #expect(Set(nonces.map { $0.map(String.init).joined(separator: ",") }).count == 100)
        // A handshake between two nodes with drawn nonces goes through.
        let key = Array("k".utf8)
        var dialer = RelayDialer(node: "n2", key: key, nonce: RelayNonce.draw())
        var acceptor = RelayAcceptor(node: "n1", key: key, nonce: RelayNonce.draw())
        let challenge = try acceptor.receive(dialer.hello).send
        guard case .established(let peer, let proof, _) = try dialer.receive(challenge) else {
            Issue.record("no link")
            return
        }
        #expect(peer == "n1")
        #expect(try acceptor.receive(proof).peer == "n2")
    }
}
