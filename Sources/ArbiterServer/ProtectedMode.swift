import ArbiterCore
import Glibc

/// Redis-style protected mode: a panel without an admin key lets anyone who can reach
/// the port RESET it and KICK its members. That is fine on loopback; beyond it the
/// server refuses to start unless `--open-admin` says the operator means it.
public enum ProtectedMode {
    /// Why the server must not start as configured, or nil when it may.
    public static func refusal(host: String, port: UInt16, panels: [PanelConfig], configPath: String?, openAdmin: Bool) -> String? {
        guard !openAdmin else { return nil }
        let open = openPanels(host: host, panels: panels)
        guard !open.isEmpty else { return nil }
        let names = open.map(\.id).joined(separator: ", ")
        let which = open.count == 1 ? "panel \(names) has" : "panels \(names) have"
        let fix =
            configPath.map { "set \"keys\": {\"admin\": \"<secret>\"} on \(open.count == 1 ? "it" : "each of them") in \($0)" }
            ?? "serve a --config file whose panels set \"keys\": {\"admin\": \"<secret>\"} (the embedded demo has no keys)"
        return "--host \(host) listens beyond this machine, and \(which) no admin key, so anyone who can reach \(port == 0 ? "its port" : "port \(port)") "
            + "could RESET \(open.count == 1 ? "it" : "them") and KICK anyone. To fix it, \(fix); "
            + "or pass --open-admin to serve \(open.count == 1 ? "it" : "them") open anyway (protected mode, see the README)."
    }

    /// The panels whose admin level is open to whoever can reach `host`: none on loopback.
    ///
    /// A panel with only a press or view key counts too: its admin level falls back to
    /// that key, so every presser could RESET and KICK, which is what the admin key is for.
    public static func openPanels(host: String, panels: [PanelConfig]) -> [PanelConfig] {
        guard !isLoopback(host) else { return [] }
        return panels.filter { $0.keys.admin == nil }
    }

    /// Whether `host` (an IP literal or `localhost`) is reachable from this machine only.
    public static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" { return true }
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 {
            return UInt32(bigEndian: v4.s_addr) >> 24 == 127
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, host, &v6) == 1 else { return false }
        let b = withUnsafeBytes(of: v6) { Array($0) }
        // ::1, or an IPv4-mapped loopback address (::ffff:127.x.x.x).
        if b[0..<15].allSatisfy({ $0 == 0 }) && b[15] == 1 { return true }
        return b[0..<10].allSatisfy { $0 == 0 } && b[10] == 0xFF && b[11] == 0xFF && b[12] == 127
    }
}
