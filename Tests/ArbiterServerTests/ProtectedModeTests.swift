import ArbiterCore
import Testing
@testable import ArbiterServer

@Suite("protected mode")
struct ProtectedModeTests {
    @Test func loopbackAddresses() {
        for host in ["127.0.0.1", "127.0.0.2", "127.255.255.254", "::1", "::ffff:127.0.0.1", "localhost"] {
            #expect(ProtectedMode.isLoopback(host), "\(host)")
        }
        for host in ["0.0.0.0", "::", "10.0.0.7", "192.168.1.2", "::ffff:10.0.0.1", "fe80::1", "128.0.0.1", "::2"] {
            #expect(!ProtectedMode.isLoopback(host), "\(host)")
        }
    }

    @Test func onlyPanelsWithoutAnAdminKeyCount() {
        let b = [ButtonConfig(id: "b1", label: "b1", kind: .tap)]
        let panels = [
            PanelConfig(id: "open", buttons: b),
            PanelConfig(id: "viewonly", buttons: b, keys: PanelKeys(view: "v")),
            PanelConfig(id: "safe", buttons: b, keys: PanelKeys(admin: "a")),
        ]
        #expect(ProtectedMode.openPanels(host: "0.0.0.0", panels: panels).map(\.id) == ["open", "viewonly"])
        #expect(ProtectedMode.openPanels(host: "127.0.0.1", panels: panels).isEmpty)
        #expect(ProtectedMode.refusal(host: "0.0.0.0", port: 7070, panels: panels, configPath: "h.json", openAdmin: true) == nil)
        #expect(ProtectedMode.refusal(host: "::1", port: 7070, panels: panels, configPath: "h.json", openAdmin: false) == nil)
        let refusal = ProtectedMode.refusal(host: "0.0.0.0", port: 7070, panels: panels, configPath: "h.json", openAdmin: false)
        #expect(refusal?.contains("panels open, viewonly have no admin key, so anyone who can reach port 7070 could RESET them") == true)
        #expect(refusal?.contains("in h.json; or pass --open-admin") == true)
    }
}
