import ArbiterCluster
import ArbiterClusterTestSupport
import ArbiterIO
import ArbiterTestSupport
import Foundation
import Glibc
import Testing

@testable import ArbiterClusterServer
@testable import ArbiterServer

/// The start-up check that `--advertise` reaches this very node. Found by hand: a node
/// started with `--advertise 127.0.0.1:1` won its share of the panels, and every other
/// node's clients got `ERROR unavailable` for them while it ran; its log said nothing.
@Suite("cluster mode: the advertised address is checked at start", .serialized)
struct AdvertiseCheckTests {
    /// A listening socket on 127.0.0.1 and an ephemeral port, closed by the caller.
    static func listening() throws -> (fd: Int32, port: UInt16) {
        try Sys.listen(host: "127.0.0.1", port: 0, backlog: 16)
    }

    /// What `fd` offers within a second.
    static func read(_ fd: Int32) -> String {
        var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard Glibc.poll(&ready, 1, 1_000) > 0 else { return "" }
        var buffer = [UInt8](repeating: 0, count: 256)
        guard case .bytes(let n) = buffer.withUnsafeMutableBytes({ Sys.read(fd, into: $0) }) else { return "" }
        return String(decoding: buffer[..<n], as: UTF8.self)
    }

    @Test func aClientAcceptedDuringTheCheckKeepsItsBytesForTheServer() throws {
        let listener = try Self.listening()
        defer { Sys.close(listener.fd) }
        // In the backlog before the probe, as a kiosk reconnecting to a restarting node is.
        let early = try RawSocket(port: listener.port)
        early.send("PING early\n")
        var check = AdvertiseCheck(address: try #require(RelayAddress("127.0.0.1:\(listener.port)")), listener: listener.fd)
        #expect(check.run() == .reachesThisNode)
        #expect(check.others.count == 1)
        for other in check.others {
            #expect(Self.read(other.fd) == "PING early\n")
            Sys.close(other.fd)
        }
    }

    @Test func anAddressNothingListensAtIsUnreachable() throws {
        let listener = try Self.listening()
        let free = try Self.listening()
        Sys.close(free.fd)
        defer { Sys.close(listener.fd) }
        var check = AdvertiseCheck(address: try #require(RelayAddress("127.0.0.1:\(free.port)")), listener: listener.fd)
        #expect(check.run() == .unreachable("Connection refused"))
    }

    /// Relay links never resolve names: a node advertised by one was reached by no node.
    @Test func aNameIsRefusedAsOneNoNodeWouldDial() throws {
        let listener = try Self.listening()
        defer { Sys.close(listener.fd) }
        var check = AdvertiseCheck(address: try #require(RelayAddress("arbiter1.lan:\(listener.port)")), listener: listener.fd)
        #expect(check.run() == .unreachable("arbiter1.lan is a name, and nodes reach each other by IP address only: advertise this node's IP address"))
        var local = AdvertiseCheck(address: try #require(RelayAddress("localhost:\(listener.port)")), listener: listener.fd)
        #expect(local.run() == .reachesThisNode)
    }

    /// Every node given the first node's address: the probe meets a running server, which
    /// greets it first (this node serves nobody yet).
    @Test func anotherServerAnsweringIsNamedByWhatItSaid() throws {
        let other = try Self.listening()
        defer { Sys.close(other.fd) }
        let greeter = Thread {
            var ready = pollfd(fd: other.fd, events: Int16(POLLIN), revents: 0)
            guard Glibc.poll(&ready, 1, 3_000) > 0, case .accepted(let fd, _) = Sys.accept(other.fd) else { return }
            let greeting = Array("WELCOME session=s9 name=guest-9 proto=1\n".utf8)
            _ = greeting.withUnsafeBytes { Sys.write(fd, $0) }
            // Open until the probe hangs up (3 s at most), so it reads the greeting before
            // any end of file; whatever it sends is read, since closing on unread bytes
            // would reset the connection and could lose the greeting on its side.
            var scratch = [UInt8](repeating: 0, count: 512)
            for _ in 0..<16 {
                var gone = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard Glibc.poll(&gone, 1, 3_000) > 0, Glibc.read(fd, &scratch, scratch.count) > 0 else { break }
            }
            Sys.close(fd)
        }
        greeter.start()
        #expect(try Self.probe(elsewhere: other.port) == .reachesSomethingElse("it answered 'WELCOME session=s9 name=guest-9 proto=1'"))
    }

    /// Something that takes connections and says nothing (a forwarder to another machine,
    /// a service that waits for its client to speak).
    @Test func somethingSilentIsGivenUpAfterTheTimeout() throws {
        let silent = try Self.listening()
        defer { Sys.close(silent.fd) }
        #expect(try Self.probe(elsewhere: silent.port, timeoutMs: 300) == .reachesSomethingElse("nothing it took reached this node's port within 300 ms"))
    }

    /// The check of a node listening on a port of its own, advertised at `port` instead.
    static func probe(elsewhere port: UInt16, timeoutMs: Int = 3_000) throws -> AdvertiseCheck.Outcome {
        let listener = try listening()
        defer { Sys.close(listener.fd) }
        var check = AdvertiseCheck(address: try #require(RelayAddress("127.0.0.1:\(port)")), listener: listener.fd, timeoutMs: timeoutMs)
        return check.run()
    }

    @Test func aLoopbackAddressAdvertisedToOtherMachinesIsWarnedOf() {
        #expect(AdvertiseCheck.loopbackWarning(advertiseHost: "127.0.0.1", listenHost: "0.0.0.0")?.contains("another machine") == true)
        #expect(AdvertiseCheck.loopbackWarning(advertiseHost: "[::1]", listenHost: "::") != nil)
        #expect(AdvertiseCheck.loopbackWarning(advertiseHost: "localhost", listenHost: "10.0.0.11") != nil)
        // Every node on one machine, serving only it; or a real address advertised.
        #expect(AdvertiseCheck.loopbackWarning(advertiseHost: "127.0.0.1", listenHost: "127.0.0.1") == nil)
        #expect(AdvertiseCheck.loopbackWarning(advertiseHost: "10.0.0.11", listenHost: "0.0.0.0") == nil)
    }

    static func configuration(advertise: (UInt16) -> String, port: UInt16, checks: Bool) -> ServerConfiguration {
        let etcd = SharedEtcd().view()
        var configuration = ServerConfiguration()
        configuration.port = port
        configuration.logLevel = .off
        var setup = ClusterSetup(
            node: "n1", advertise: advertise(port), key: Array("k".utf8), control: etcd, lease: etcd, endpointsDescription: "http://e1:2379",
            timing: ClusterTestNodes.timing)
        setup.checksAdvertise = checks
        configuration.cluster = setup
        return configuration
    }

    @Test func aNodeAdvertisedWhereNothingListensIsRefusedBeforeItLeadsAnything() throws {
        let port = try ClusterTestNodes.freePort()
        let server = ArbiterServer(configuration: Self.configuration(advertise: { _ in "127.0.0.1:1" }, port: port, checks: true))
        do {
            try server.start()
            server.stop()
            Issue.record("started")
        } catch let refusal as ClusterStartFailure {
            #expect(
                refusal.message.hasPrefix("--advertise 127.0.0.1:1 does not reach this node: connecting to it from this machine failed (Connection refused)"),
                "\(refusal.message)")
            #expect(refusal.message.contains("--no-advertise-check"))
        }
        #expect(server.port == 0, "a refused node never listens")
        // The port was given back: a node started again at once with the right address gets it.
        let again = ArbiterServer(configuration: Self.configuration(advertise: { "127.0.0.1:\($0)" }, port: port, checks: true))
        #expect(try again.start() == port)
        defer { again.stop() }
        let client = try LineClient(port: port)
        #expect(try client.expect("WELCOME").hasPrefix("WELCOME session="))
    }
}
