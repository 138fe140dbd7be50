import ArbiterCluster
import ArbiterClusterServer
import ArbiterClusterTestSupport
import ArbiterCore
import ArbiterServer
import ArbiterTestSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Real servers in cluster mode on one in-memory etcd, in this process, with real relay
/// sockets between them; each listens on 127.0.0.1 and a port it advertises. The lease is
/// short (TTL 2 s) so a failover takes about two seconds.
final class ClusterNodes: @unchecked Sendable {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    let etcd = SharedEtcd()
    private(set) var servers: [String: ArbiterServer] = [:]
    private(set) var ports: [String: UInt16] = [:]

    init(_ names: [String]) throws {
        for name in names { try start(name) }
    }

    deinit {
        for server in servers.values { server.stop() }
    }

    private func start(_ name: String) throws {
        var configuration = ServerConfiguration()
        configuration.port = try Self.freePort()
        configuration.panels = [CalmPanel.config]
        configuration.logLevel = .error
        configuration.logSink = { _ in Changes.bump() }
        let setup = ClusterSetup(
            node: name, advertise: "127.0.0.1:\(configuration.port)", key: Array("client test cluster key".utf8), control: etcd.view(),
            lease: etcd.view(), endpointsDescription: "in-memory",
            timing: ClusterTiming(ttlSeconds: 2, keepAliveIntervalMilliseconds: 100, safetyMarginMilliseconds: 300), stepIntervalMilliseconds: 50)
        configuration.cluster = setup
        let server = ArbiterServer(configuration: configuration)
        ports[name] = try server.start()
        servers[name] = server
    }

    /// A port the kernel just gave out and took back: a node must know its port to
    /// advertise it before it listens.
    private static func freePort() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw Failure(description: "bind: \(errno)") }
        return UInt16(bigEndian: address.sin_port)
    }

    func host(_ name: String) -> String { "127.0.0.1:\(ports[name] ?? 0)" }

    /// The node every running node names as `panel`'s leader (PANELS `leader=`), once they
    /// agree; waits on the cluster's changes, at most `seconds`.
    func leader(of panel: String = "demo", seconds: Double = 15) throws -> String {
        var agreed: String?
        let probes = try servers.keys.sorted().map { name -> LineClient in
            let client = try LineClient(port: ports[name] ?? 0)
            client.send("HELLO probe-\(name)")
            _ = try client.expect("OK HELLO")
            return client
        }
        eventually(seconds: seconds) {
            let answers = probes.map { probe -> String? in
                probe.send("PANELS")
                guard let lines = try? probe.readLines(through: "OK PANELS"),
                    let line = lines.first(where: { $0.hasPrefix("PANEL \(panel) ") })
                else { return nil }
                return field("leader", of: line)
            }
            guard let first = answers.first, let name = first, name != "-", answers.allSatisfy({ $0 == name }) else { return false }
            agreed = name
            return true
        }
        guard let agreed else { throw Failure(description: "no leader of \(panel) that every node agrees on within \(seconds) s") }
        return agreed
    }

    /// As a crash: no resignation, the others take over when its lease runs out.
    func crash(_ name: String) {
        servers.removeValue(forKey: name)?.stop()
    }
}
