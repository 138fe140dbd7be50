import ArbiterCluster
import ArbiterClusterTestSupport
@testable import ArbiterClusterServer
import ArbiterIO
@testable import ArbiterServer
import ArbiterTestSupport
import Dispatch
import Glibc

/// A node of the relay tests: a `RelayNetwork` behind a real server on 127.0.0.1 (port 0
/// unless given) whose hand-off hook adopts relay connections, and what it saw.
final class RelayTestNode: @unchecked Sendable {
    struct Seen {
        var messages: [(from: String, message: RelayMessage)] = []
        var ups: [String] = []
        var downs: [String] = []
        /// Ups and downs in the order they were reported.
        var links: [String] = []
        var undelivered: [(node: String, count: Int)] = []
        var log: [String] = []
    }

    let name: String
    let seen = Locked(Seen())
    let network: RelayNetwork
    private(set) var server: TestServer?
    let port: UInt16

    var address: String { "127.0.0.1:\(port)" }

    init(
        _ name: String, key: [UInt8] = RelayTestNode.key, options: RelayOptions = RelayOptions(), port: UInt16 = 0, nodeAddresses: [String] = [],
        whileReceiving: (@Sendable (RelayMessage) -> Void)? = nil, outputStands: @escaping @Sendable (UInt64) -> Bool = { _ in true }
    ) throws {
        self.name = name
        let seen = self.seen
        // Everything seen bumps `Changes`, after it is recorded: the tests wait on it.
        let log = ServerLog(level: .info) { line in
            seen.withLock { $0.log.append(line) }
            Changes.bump()
        }
        let network = RelayNetwork(
            node: name, key: key, log: log, options: options,
            onMessage: { from, message in
                whileReceiving?(message)
                seen.withLock { $0.messages.append((from, message)) }
                Changes.bump()
            },
            onLinkUp: { node in
                seen.withLock {
                    $0.ups.append(node)
                    $0.links.append("up \(node)")
                }
                Changes.bump()
            },
            onLinkDown: { node in
                seen.withLock {
                    $0.downs.append(node)
                    $0.links.append("down \(node)")
                }
                Changes.bump()
            },
            onUndelivered: { node, count in
                seen.withLock { $0.undelivered.append((node, count)) }
                Changes.bump()
            },
            outputStands: outputStands)
        self.network = network
        let server = try TestServer { configuration in
            configuration.port = port
            configuration.relayHandOff = { fd, peer, firstBytes in
                network.adopt(fd: fd, peer: peer, firstBytes: firstBytes, nodeAddresses: nodeAddresses)
            }
        }
        self.server = server
        self.port = server.port
    }

    deinit { stop() }

    /// The node dies: its links close, its port stops answering.
    func stop() {
        network.stop()
        server?.server.stop()
        server = nil
    }

    func send(_ message: RelayMessage, to other: RelayTestNode) {
        network.send(message, toNode: other.name, address: other.address)
    }

    var received: [RelayMessage] { seen.withLock { $0.messages.map(\.message) } }

    func logLines(containing text: String) -> [String] {
        seen.withLock { $0.log.filter { $0.contains(text) } }
    }

    static let key = Array("relay test key, 32 bytes or so..".utf8)

    /// Every kind of message, `count` of them, told apart by `tag` and their index.
    static func messages(_ count: Int, tag: String) -> [RelayMessage] {
        (0..<count).map { i in
            let n = UInt64(i)
            switch i % 5 {
            case 0:
                return .command(
                    RelayCommand(
                        origin: tag, session: n, sessionName: "guest-\(i)", key: i % 2 == 0 ? nil : "k\(i)", panel: "demo",
                        command: Array(#"{"cmd":"down","panel":"demo","button":"b\#(i)"}"#.utf8), arrivedAt: Int64(i)))
            case 1: return .reply(panel: "demo", term: 7, session: n, line: Array("OK \(tag) \(i)".utf8))
            case 2: return .event(panel: "demo", term: 7, seq: n, line: Array("PRESSED \(tag) \(i)\n".utf8))
            case 3: return .sessionGone(origin: tag, session: n)
            default: return .reply(panel: "demo-\(tag)", term: Int64(i + 1), session: n, line: Array(repeating: 0x7A, count: i), serial: n)
            }
        }
    }
}
