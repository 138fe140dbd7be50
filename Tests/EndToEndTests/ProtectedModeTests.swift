import ArbiterTestSupport
import Foundation
import Testing

/// Protected mode, as a user meets it: `--host` beyond loopback with a panel that has
/// no admin key is refused (exit 78) unless `--open-admin` is given. Servers here may
/// bind every address, but the tests only ever connect to 127.0.0.1.
@Suite("end to end: protected mode")
struct ProtectedModeTests {
    func configFile(_ json: String) throws -> (path: String, cleanup: () -> Void) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("arbiter-pm-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let file = dir.appendingPathComponent("hall.json")
        try Data(json.utf8).write(to: file)
        return (file.path, { try? FileManager.default.removeItem(at: dir) })
    }

    @Test(arguments: ["0.0.0.0", "::"]) func theDemoBeyondLoopbackIsRefused(host: String) throws {
        let result = try ArbiterProcess.run(["--host", host, "--port", "0"])
        #expect(result.status == 78)
        #expect(result.stderr.hasPrefix("error: --host \(host) listens beyond this machine, and panel demo has no admin key"))
        #expect(result.stderr.contains("serve a --config file whose panels set \"keys\": {\"admin\": \"<secret>\"}"))
        #expect(result.stderr.contains("or pass --open-admin"))
        // Said once, and nothing was started.
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        #expect(!result.stderr.contains("msg=listening"))
    }

    @Test func theRefusalNamesEveryPanelWithoutAnAdminKey() throws {
        let config = try configFile(
            #"""
            {"panels":[
              {"id":"open","buttons":[{"id":"b1"}]},
              {"id":"pressonly","buttons":[{"id":"b1"}],"keys":{"press":"p"}},
              {"id":"safe","buttons":[{"id":"b1"}],"keys":{"admin":"boss"}}]}
            """#)
        defer { config.cleanup() }
        let result = try ArbiterProcess.run(["--host", "0.0.0.0", "--port", "0", "--config", config.path])
        #expect(result.status == 78)
        #expect(result.stderr.contains("panels open, pressonly have no admin key"), "\(result.stderr)")
        #expect(!result.stderr.contains("safe"))
        #expect(result.stderr.contains("set \"keys\": {\"admin\": \"<secret>\"} on each of them in \(config.path)"))
    }

    @Test func theFlagIsListedAndGuessed() throws {
        let help = try ArbiterProcess.run(["--help"])
        #expect(help.stdout.contains("--open-admin          Listen beyond loopback even though some panel has no admin"))
        let typo = try ArbiterProcess.run(["--host", "0.0.0.0", "--open-amdin"])
        #expect(typo.status == 64)
        #expect(typo.stderr.contains("unknown argument '--open-amdin'; did you mean --open-admin?"))
    }

    @Test func openAdminStartsWithAWarning() throws {
        let arbiter = try ArbiterProcess(["--host", "0.0.0.0", "--port", "0", "--open-admin"])
        defer { arbiter.terminate() }
        #expect(
            arbiter.stderr.contains(
                #"level=warn msg="protected mode off (--open-admin): anyone who can connect may RESET and KICK on these panels" host=0.0.0.0 panels=demo"#),
            "\(arbiter.stderr)")
        let c = try LineClient(host: "127.0.0.1", port: arbiter.port)
        c.send("HELLO a")
        #expect(try c.expect("OK HELLO").hasSuffix("role=admin"))
        c.send("RESET demo")
        _ = try c.expect("OK RESET demo")
    }

    @Test func everyPanelWithAnAdminKeyStartsWithoutAWarning() throws {
        let config = try configFile(#"{"panels":[{"id":"hall","buttons":[{"id":"b1"}],"keys":{"admin":"boss"}}]}"#)
        defer { config.cleanup() }
        let arbiter = try ArbiterProcess(["--host", "0.0.0.0", "--port", "0", "--config", config.path])
        defer { arbiter.terminate() }
        let c = try LineClient(host: "127.0.0.1", port: arbiter.port)
        c.send("HELLO guest\nRESET hall")
        #expect(try c.expect("ERROR").hasPrefix("ERROR forbidden"))
        #expect(!arbiter.stderr.contains("protected mode"))
        #expect(!arbiter.stderr.contains("level=warn"))
    }

    /// Cluster nodes listen beyond loopback so other machines can reach them: the same
    /// refusal, before etcd is asked anything (port 9 on loopback would refuse the connect).
    @Test func aClusterNodeBeyondLoopbackIsRefusedBeforeEtcdIsAsked() throws {
        let config = try configFile(#"{"panels":[{"id":"hall","buttons":[{"id":"b1"}],"keys":{"press":"p"}}]}"#)
        defer { config.cleanup() }
        let key = URL(fileURLWithPath: config.path).deletingLastPathComponent().appendingPathComponent("cluster.key")
        try Data("3q9XvT2bW7kLm4PzR8sNc1\n".utf8).write(to: key)
        chmod(key.path, 0o600)
        let result = try ArbiterProcess.run([
            "--host", "0.0.0.0", "--port", "0", "--config", config.path,
            "--cluster", "http://127.0.0.1:9", "--node", "n1", "--advertise", "127.0.0.1:7071", "--cluster-key", key.path,
        ])
        #expect(result.status == 78)
        #expect(result.stderr.hasPrefix("error: --host 0.0.0.0 listens beyond this machine, and panel hall has no admin key"), "\(result.stderr)")
        #expect(!result.stderr.contains("etcd"), "\(result.stderr)")
    }

    @Test(arguments: ["127.0.0.1", "::1", "localhost"]) func loopbackHostsAreUnaffected(host: String) throws {
        let arbiter = try ArbiterProcess(["--host", host, "--port", "0"])
        defer { arbiter.terminate() }
        #expect(!arbiter.stderr.contains("protected mode"))
        #expect(!arbiter.stderr.contains("level=warn"))
    }
}
