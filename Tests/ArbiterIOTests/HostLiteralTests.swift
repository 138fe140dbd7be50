import ArbiterIO
import Testing

@Suite struct HostLiteralTests {
    @Test func literalsAreTakenAndNamesAreNot() {
        #expect(HostLiteral("127.0.0.1") == HostLiteral("localhost"))
        #expect(HostLiteral("localhost")?.address == "127.0.0.1")
        #expect(HostLiteral("[::1]")?.address == "::1")
        #expect(HostLiteral("::")?.isIPv6 == true)
        #expect(HostLiteral("0.0.0.0")?.isIPv6 == false)
        #expect(HostLiteral("example.org") == nil)
        #expect(HostLiteral("") == nil)
    }

    @Test func authorityBracketsIPv6Only() {
        #expect(HostLiteral.authority("::1", port: 7070) == "[::1]:7070")
        #expect(HostLiteral.authority("127.0.0.1", port: 80) == "127.0.0.1:80")
        #expect(HostLiteral.authority("example.org", port: 80) == "example.org:80")
    }
}
