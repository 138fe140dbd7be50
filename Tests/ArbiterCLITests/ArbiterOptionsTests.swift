import ArbiterCLI
import ArbiterServer
import Testing

@testable import arbiter

/// arbiter's own command line, parsed without starting anything.
@Suite struct ArbiterOptionsTests {
    @Test func flagsLandInTheConfiguration() throws {
        let o = try ArbiterOptions.parse([
            "--host", "[::1]", "--port=0", "--rate", "0", "--journal", "j.log", "--journal-sync",
            "--allow-host", "Panel.Example.org", "--reactors=2", "--log-level", "warn", "--idle-spin", "200",
        ])
        #expect(o.host == "::1")
        #expect(o.port == 0)
        #expect(o.journalPath == "j.log" && o.journalSync)
        var c = ServerConfiguration()
        o.apply(to: &c)
        #expect(c.commandsPerSecond == 0)
        #expect(c.reactorCount == 2)
        #expect(c.idleSpinNs == 200_000)
        var defaults = ServerConfiguration()
        try ArbiterOptions.parse(["--idle-spin=350"]).apply(to: &defaults)
        #expect(defaults.idleSpinNs == 350_000)
        #expect(ServerConfiguration().idleSpinNs == 0)
        #expect(c.logLevel == .warning)
        #expect(c.allowedHosts.contains("panel.example.org"))
        #expect(c.keyFailures.ceilingPerSecond == 50)
        try ArbiterOptions.parse(["--key-failure-rate", "7", "--key-failures=0"]).apply(to: &defaults)
        #expect(defaults.keyFailures.ceilingPerSecond == 7 && defaults.keyFailures.allowance == 0)
        #expect(try ArbiterOptions.parse(["-h"]).showHelp)
        #expect(try ArbiterOptions.parse([]) == ArbiterOptions())
    }

    @Test func mistakesKeepTheirWording() {
        let cases: [([String], String)] = [
            (["--prot", "1"], "unknown argument '--prot'; did you mean --port?"),
            (["--open-amdin"], "unknown argument '--open-amdin'; did you mean --open-admin?"),
            (["serve"], "unknown argument 'serve'"),
            (["--port", "70000"], "--port must be a number from 0 to 65535, not '70000'"),
            (["--port"], "missing value for --port"),
            (["--config", "--port", "1"], "missing value for --config"),
            (["--rate=-1"], "--rate must be a whole number from 0 to 10000000, not '-1'"),
            (["--journal-max-bytes", "100"], "--journal-max-bytes must be 0 or at least 65536, not 100"),
            (["--host", "example.org"], "--host must be an IP address such as 127.0.0.1, 0.0.0.0, ::1 or ::, not 'example.org'"),
            (["--idle-spin", "2000"], "--idle-spin must be a whole number from 0 to 1000, not '2000'"),
            (["--key-failure-rate", "-1"], "--key-failure-rate must be a whole number from 0 to 1000000, not '-1'"),
            (["--log-level", "loud"], "--log-level must be debug, info, warn, error or off, not 'loud'"),
        ]
        for (arguments, message) in cases {
            #expect(throws: UsageError(message: message), "\(arguments)") { try ArbiterOptions.parse(arguments) }
        }
    }

    @Test func everyFlagInTheHelpIsKnown() {
        // A flag the help shows but the list lacks would get no "did you mean" hint.
        let words = ArbiterOptions.help.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "," })
        let shown = Set(words.filter { $0.hasPrefix("--") && $0.count > 2 }.map { String($0.prefix { $0 == "-" || $0.isLetter }) })
        #expect(shown.subtracting(ArbiterOptions.flags).isEmpty, "\(shown.subtracting(ArbiterOptions.flags))")
    }
}
