import ArbiterHooks
import ArbiterWire
import Testing

@Suite struct WebhookSignatureTests {
    /// The Standard Webhooks specification's published test vector: matching it is what
    /// lets a receiver check our requests with that specification's libraries.
    @Test func matchesTheStandardWebhooksTestVector() throws {
        let key = try HookSecret.parse(Array("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n".utf8)).get()
        let signature = WebhookSignature.sign(
            key: key, id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1_614_265_330, body: Array(#"{"test": 2432232314}"#.utf8))
        #expect(signature == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
    }

    @Test func headersCarryTheSignatureOnlyWithAKey() {
        let plain = WebhookSignature.headers(id: "a_p_1", timestamp: 5, body: [], key: nil)
        #expect(plain.map(\.0) == ["webhook-id", "webhook-timestamp"])
        let signed = WebhookSignature.headers(id: "a_p_1", timestamp: 5, body: [], key: Array(repeating: 7, count: 16))
        #expect(signed.map(\.0) == ["webhook-id", "webhook-timestamp", "webhook-signature"])
        #expect(signed[2].1.hasPrefix("v1,"))
    }

    @Test func secretsAreWhsecAndBase64OfAtLeastSixteenBytes() {
        #expect(throws: HookSecretFailure.self) { try HookSecret.parse(Array("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw".utf8)).get() }
        #expect(throws: HookSecretFailure.self) { try HookSecret.parse(Array("whsec_c2hvcnQ=".utf8)).get() }
        #expect(throws: HookSecretFailure.self) { try HookSecret.parse(Array("whsec_not base64!".utf8)).get() }
        #expect(throws: HookSecretFailure.self) { try HookSecret.parse(Array("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n\n".utf8)).get() }
        #expect((try? HookSecret.parse(Array("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw".utf8)).get())?.count == 24)
    }

    @Test func idsAreUniquePerProcessPanelAndSeq() {
        let a = WebhookID.random()
        let b = WebhookID.random()
        #expect(a.incarnation != b.incarnation)
        #expect(a.make(panel: "p_1", seq: 2) != a.make(panel: "p", seq: 12))
        #expect(a.make(panel: "demo", seq: 38) == "\(a.incarnation)_demo_38")
    }

    @Test func timesAreRFC3339InUTC() {
        #expect(RFC3339.utc(milliseconds: 0) == "1970-01-01T00:00:00.000Z")
        #expect(RFC3339.utc(milliseconds: 1_614_265_330_123) == "2021-02-25T15:02:10.123Z")
        #expect(RFC3339.utc(milliseconds: 951_782_400_000) == "2000-02-29T00:00:00.000Z")
    }

    @Test func urlsAreHTTPOrHTTPSWithAHost() throws {
        let u = try HookURL.parse("http://127.0.0.1:8080/hook?x=1").get()
        #expect(u.host == "127.0.0.1" && u.port == 8080 && u.target == "/hook?x=1" && !u.secure)
        let s = try HookURL.parse("https://[::1]").get()
        #expect(s.host == "::1" && s.port == 443 && s.target == "/" && s.secure)
        for bad in ["ftp://x/", "http://", "http://u:p@x/", "http://x:0/", "http://x/a b", "http://x/#f", "http://x:99999/"] {
            #expect(throws: HookURLFailure.self, "\(bad)") { try HookURL.parse(bad).get() }
        }
    }
}
