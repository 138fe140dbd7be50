import ArbiterTestSupport
import Foundation
import Testing

/// Cluster mode's refusals as the operator sees them: one `error:` line, then 78 for an
/// unusable key file (open to others, or too short to stand offline guessing), 1 when etcd does not answer, 64 for flags that do not go together.
@Suite("end to end: cluster start refusals")
struct ClusterStartTests {
    @Test func unusableKeysAndUnreachableEtcdAreRefusedClearly() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("arbiter-cl-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let key = dir.appendingPathComponent("cluster.key")
        try Data("s3cret\n".utf8).write(to: key)
        chmod(key.path, 0o644)
        // Port 9 on loopback: nothing listens (discard is not run), so the connect is refused.
        let flags = ["--port", "0", "--cluster", "http://127.0.0.1:9", "--node", "n1", "--advertise", "127.0.0.1:7071", "--cluster-key", key.path]
        let open = try ArbiterProcess.run(flags)
        #expect(open.status == 78)
        #expect(open.stderr == "error: --cluster-key \(key.path) is readable by group or others (mode 644); chmod 600 \(key.path)\n")
        chmod(key.path, 0o600)
        let short = try ArbiterProcess.run(flags)
        #expect(short.status == 78)
        #expect(short.stderr.hasPrefix("error: --cluster-key \(key.path) holds only 6 bytes; use at least 16 random ones"), "\(short.stderr)")
        try Data("3q9XvT2bW7kLm4PzR8sNc1\n".utf8).write(to: key)
        let unreachable = try ArbiterProcess.run(flags)
        #expect(unreachable.status == 1)
        #expect(unreachable.stderr.contains("error: etcd did not answer at http://127.0.0.1:9 ("), "\(unreachable.stderr)")
        let alone = try ArbiterProcess.run(["--port", "0", "--node", "n1"])
        #expect(alone.status == 64)
        #expect(alone.stderr.contains("--node only applies with --cluster <etcd URLs>"))
    }
}
