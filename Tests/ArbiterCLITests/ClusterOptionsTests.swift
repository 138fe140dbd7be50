import ArbiterCLI
import ArbiterEtcd
import Foundation
import Testing

@testable import arbiter

/// The cluster flags: parsed together, refused alone, and the key file's checks.
@Suite struct ClusterOptionsTests {
    @Test func theClusterFlagsGoTogether() throws {
        let o = try ArbiterOptions.parse([
            "--cluster", "http://127.0.0.1:2379,http://[::1]:2380", "--node", "n1.a_b-c", "--advertise", "10.0.0.11:7070",
            "--cluster-key", "k", "--cluster-ttl", "5",
        ])
        #expect(o.clusterEndpoints == [EtcdEndpoint(host: "127.0.0.1", port: 2379), EtcdEndpoint(host: "::1", port: 2380)])
        #expect(o.node == "n1.a_b-c" && o.advertise == "10.0.0.11:7070" && o.clusterKeyPath == "k" && o.clusterTTLSeconds == 5)
        #expect(try ArbiterOptions.parse(["--cluster=http://e:2379", "--node=n", "--advertise=[::1]:7070", "--cluster-key=k"]).clusterTTLSeconds == 3)
        #expect(try ArbiterOptions.parse([]).clusterEndpoints == nil)
        #expect(o.checksAdvertise)
        #expect(
            try !ArbiterOptions.parse(["--cluster=http://e:2379", "--node=n", "--advertise=10.0.0.11:7070", "--cluster-key=k", "--no-advertise-check"])
                .checksAdvertise)
        // Spaces around the commas, as pasted from a document, and a trailing slash.
        let spaced = try ArbiterOptions.parse([
            "--cluster", "http://e1:2379, http://e2:2379/ ,http://e3:2379", "--node", "n1", "--advertise", "10.0.0.11:7070", "--cluster-key", "k",
        ])
        #expect(spaced.clusterEndpoints?.map(\.description) == ["http://e1:2379", "http://e2:2379", "http://e3:2379"])
    }

    @Test func clusterMistakesAreNamed() {
        let base = ["--cluster", "http://127.0.0.1:2379", "--node", "n1", "--advertise", "127.0.0.1:7071", "--cluster-key", "k"]
        let cases: [([String], String)] = [
            (["--cluster", "https://e:2379"] + base.dropFirst(2), "https is not supported"),
            (["--cluster", "http://e"] + base.dropFirst(2), "needs a :port"),
            (["--cluster", "http://e:2379/v3"] + base.dropFirst(2), "etcd endpoint \"http://e:2379/v3\": takes no path, only http://host:port"),
            (["--cluster", "http://e:2379,"] + base.dropFirst(2), "etcd endpoint \"\": must start with http://"),
            (["--node", "n1"], "--node only applies with --cluster <etcd URLs>"),
            (["--cluster-ttl", "3"], "--cluster-ttl only applies with --cluster <etcd URLs>"),
            (["--no-advertise-check"], "--no-advertise-check only applies with --cluster <etcd URLs>"),
            (Array(base.prefix(2)) + ["--advertise", "127.0.0.1:7071", "--cluster-key", "k"], "--cluster needs --node <name>"),
            (Array(base.prefix(4)) + ["--cluster-key", "k"], "--cluster needs --advertise <host:port>"),
            (Array(base.prefix(6)), "--cluster needs --cluster-key <file>"),
            (base + ["--node", "bad name"], "--node must match [A-Za-z0-9._-]{1,64}, not 'bad name'"),
            (base + ["--node", String(repeating: "n", count: 65)], "--node must match"),
            (base + ["--advertise", "10.0.0.11"], "--advertise must be host:port"),
            (base + ["--advertise", "10.0.0.11:0"], "--advertise must be host:port"),
            (base + ["--cluster-ttl", "0"], "--cluster-ttl must be a whole number from 1 to 3600"),
        ]
        for (arguments, message) in cases {
            #expect(throws: UsageError.self, "\(arguments)") { try ArbiterOptions.parse(arguments) }
            do {
                _ = try ArbiterOptions.parse(arguments)
            } catch {
                #expect(error.message.contains(message), "\(arguments): \(error.message)")
            }
        }
    }

    @Test func theKeyFileMustBePrivateAndLongEnough() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("arbiter-key-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        func write(_ name: String, _ text: String, mode: Int) -> String {
            let path = dir.appendingPathComponent(name).path
            _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
            chmod(path, mode_t(mode))
            return path
        }
        let secret = "kQ2vT7xW9pL4mZ8rB3nC6"
        let good = write("good", secret + "\n", mode: 0o600)
        #expect(try ClusterKeyFile.read(path: good).get() == Array(secret.utf8))
        // etcd's check value lets a reader test guesses offline: a word is refused, and so
        // is one byte short of the minimum (counted without the newline).
        let word = write("word", "s3cret\n", mode: 0o600)
        if case .failure(let e) = ClusterKeyFile.read(path: word) {
            #expect(
                e.message.hasPrefix("--cluster-key \(word) holds only 6 bytes; use at least 16 random ones, e.g. head -c 32 /dev/urandom | base64 > \(word)"))
        } else {
            Issue.record("a six-byte key was taken")
        }
        let short = write("short", String(repeating: "k", count: 15) + "\r\n", mode: 0o600)
        #expect(throws: UsageError.self) { try ClusterKeyFile.read(path: short).get() }
        let exact = write("exact", String(secret.prefix(16)), mode: 0o600)
        #expect(try ClusterKeyFile.read(path: exact).get().count == 16)
        let open = write("open", "s3cret", mode: 0o644)
        #expect(throws: UsageError.self) { try ClusterKeyFile.read(path: open).get() }
        if case .failure(let e) = ClusterKeyFile.read(path: open) { #expect(e.message.contains("readable by group or others (mode 644); chmod 600")) }
        let group = write("group", "s3cret", mode: 0o640)
        #expect(throws: UsageError.self) { try ClusterKeyFile.read(path: group).get() }
        let empty = write("empty", "\n", mode: 0o600)
        if case .failure(let e) = ClusterKeyFile.read(path: empty) { #expect(e.message.contains("is empty")) } else { Issue.record("an empty key was taken") }
        if case .failure(let e) = ClusterKeyFile.read(path: dir.appendingPathComponent("missing").path) {
            #expect(e.message.contains("cannot be read: No such file or directory"))
        } else {
            Issue.record("a missing key file was taken")
        }
    }
}
