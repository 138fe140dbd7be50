import ArbiterWire
import Testing

@Suite("Host and Origin checks (DNS rebinding, cross-site WebSockets)")
struct HostPolicyTests {
    let loopback = HostPolicy(listenHost: "127.0.0.1", machineNames: ["10.0.0.7", "kiosk-host"], allowedHosts: [], allowedOrigins: [])

    func verdict(_ policy: HostPolicy, host: String?, origin: String? = nil, ws: Bool = false, minor: Int = 1) -> HostPolicy.Verdict {
        policy.check(versionMinor: minor, host: host, origin: origin, isWebSocket: ws)
    }

    @Test func loopbackNamesAreAlwaysServed() {
        for host in [
            "localhost", "LOCALHOST:7070", "localhost.", "app.localhost:80", "127.0.0.1", "127.0.0.1:7070",
            "127.9.8.7:1", "[::1]:7070", "[::1]",
        ] {
            #expect(verdict(loopback, host: host) == .allowed, "\(host)")
        }
    }

    @Test func foreignNamesAreRefused() {
        for host in [
            "evil.example", "evil.example:7070", "127.0.0.1.evil.example", "127.0.0.256", "10.0.0.7:7070",
            "kiosk-host", "localhost.evil.example", "[::2]:7070", "a:b:c", "[::1]x", ":7070",
        ] {
            #expect(verdict(loopback, host: host) == .foreignHost(host), "\(host)")
        }
    }

    @Test func aSpecificListenAddressIsServedAndMachineNamesAreNot() {
        let policy = HostPolicy(listenHost: "10.0.0.7", machineNames: ["10.0.0.8"], allowedHosts: [], allowedOrigins: [])
        #expect(verdict(policy, host: "10.0.0.7:7070") == .allowed)
        #expect(verdict(policy, host: "10.0.0.8:7070") == .foreignHost("10.0.0.8:7070"))
        #expect(verdict(policy, host: "localhost:7070") == .allowed)
    }

    @Test func aWildcardServesTheMachinesAddressesAndName() {
        let policy = HostPolicy(
            listenHost: "::", machineNames: ["10.0.0.7", "fe80::1%eth0", "Kiosk-Host", "kiosk-host.local"],
            allowedHosts: [], allowedOrigins: [])
        for host in ["10.0.0.7:7070", "[fe80::1]:7070", "kiosk-host", "KIOSK-HOST.local:7070"] {
            #expect(verdict(policy, host: host) == .allowed, "\(host)")
        }
        #expect(verdict(policy, host: "10.0.0.9") == .foreignHost("10.0.0.9"))
    }

    @Test func allowHostAddsNames() {
        let policy = HostPolicy(listenHost: "127.0.0.1", machineNames: [], allowedHosts: ["Buttons.Example.org"], allowedOrigins: [])
        #expect(verdict(policy, host: "buttons.example.org") == .allowed)
        #expect(verdict(policy, host: "buttons.example.org:443") == .allowed)
        #expect(verdict(policy, host: "other.example.org") == .foreignHost("other.example.org"))
    }

    @Test func http11NeedsExactlyOneHost() {
        #expect(verdict(loopback, host: nil) == .missingHost)
        #expect(verdict(loopback, host: "") == .missingHost)
        #expect(verdict(loopback, host: nil, minor: 0) == .allowed)
        let twice = HTTPRequestHead(method: "GET", target: "/", headers: [("Host", "localhost"), ("Host", "localhost")])
        #expect(loopback.check(twice) == .duplicateHost)
    }

    @Test func webSocketOriginMustBeTheServersOwnOrAllowed() {
        #expect(verdict(loopback, host: "127.0.0.1:7070", origin: nil, ws: true) == .allowed)
        #expect(verdict(loopback, host: "127.0.0.1:7070", origin: "http://127.0.0.1:7070", ws: true) == .allowed)
        #expect(verdict(loopback, host: "localhost:7070", origin: "HTTP://LOCALHOST:7070", ws: true) == .allowed)
        #expect(verdict(loopback, host: "[::1]:7070", origin: "http://[::1]:7070", ws: true) == .allowed)
        // Another port of the same host is another origin.
        #expect(
            verdict(loopback, host: "127.0.0.1:7070", origin: "http://127.0.0.1:8000", ws: true)
                == .foreignOrigin("http://127.0.0.1:8000"))
        #expect(verdict(loopback, host: "127.0.0.1:7070", origin: "http://evil.example", ws: true) == .foreignOrigin("http://evil.example"))
        #expect(verdict(loopback, host: "127.0.0.1:7070", origin: "null", ws: true) == .foreignOrigin("null"))
        #expect(verdict(loopback, host: "127.0.0.1:7070", origin: "ftp://127.0.0.1:7070", ws: true) == .foreignOrigin("ftp://127.0.0.1:7070"))
        // Plain HTTP requests are not judged by Origin.
        #expect(verdict(loopback, host: "127.0.0.1:7070", origin: "http://evil.example", ws: false) == .allowed)
        let head = HTTPRequestHead(
            method: "GET", target: "/ws?panel=demo",
            headers: [("Host", "127.0.0.1:7070"), ("Upgrade", "websocket"), ("Origin", "http://evil.example")])
        #expect(loopback.check(head) == .foreignOrigin("http://evil.example"))
    }

    /// RFC 9112 3.2.2: a target in absolute form names the host the request is for, and
    /// the server goes by it, not by `Host`; so that is the name checked.
    @Test func anAbsoluteFormTargetsAuthorityIsCheckedInPlaceOfHost() {
        func head(_ target: String, host: String? = "127.0.0.1:7070", ws: Bool = false, minor: Int = 1) -> HTTPRequestHead {
            var headers: [(name: String, value: String)] = host.map { [("Host", $0)] } ?? []
            if ws { headers.append(("Upgrade", "websocket")) }
            return HTTPRequestHead(method: "GET", target: target, versionMinor: minor, headers: headers)
        }
        #expect(loopback.check(head("http://evil.example/api/panels")) == .foreignHost("evil.example"))
        #expect(loopback.check(head("HTTP://evil.example:7070?x=1")) == .foreignHost("evil.example:7070"))
        #expect(loopback.check(head("https://user@127.0.0.1/")) == .foreignHost("user@127.0.0.1"))
        #expect(loopback.check(head("http://evil.example/ws?panel=demo", ws: true)) == .foreignHost("evil.example"))
        #expect(loopback.check(head("http://127.0.0.1:7070/api/panels")) == .allowed)
        #expect(loopback.check(head("http://localhost/ws?panel=demo", ws: true)) == .allowed)
        // Host is replaced, not added to: a foreign one beside the server's own authority is
        // served, as the request is for this server.
        #expect(loopback.check(head("http://[::1]:7070/healthz", host: "evil.example")) == .allowed)
        // Still required once in HTTP/1.1; HTTP/1.0 may leave it out.
        #expect(loopback.check(head("http://127.0.0.1/healthz", host: nil)) == .missingHost)
        #expect(loopback.check(head("http://127.0.0.1/healthz", host: nil, minor: 0)) == .allowed)
        #expect(loopback.check(head("http://evil.example/healthz", host: nil, minor: 0)) == .foreignHost("evil.example"))
        // Same origin is the authority's origin.
        let upgrade = HTTPRequestHead(
            method: "GET", target: "http://localhost:7070/ws",
            headers: [("Host", "127.0.0.1:7070"), ("Upgrade", "websocket"), ("Origin", "http://localhost:7070")])
        #expect(loopback.check(upgrade) == .allowed)
    }

    @Test func allowOriginAddsOrigins() {
        let policy = HostPolicy(
            listenHost: "127.0.0.1", machineNames: [], allowedHosts: [],
            allowedOrigins: ["https://Panel.example.org/", "null"])
        #expect(verdict(policy, host: "127.0.0.1:7070", origin: "https://panel.example.org", ws: true) == .allowed)
        #expect(verdict(policy, host: "127.0.0.1:7070", origin: "null", ws: true) == .allowed)
        #expect(
            verdict(policy, host: "127.0.0.1:7070", origin: "http://panel.example.org", ws: true)
                == .foreignOrigin("http://panel.example.org"))
    }
}
