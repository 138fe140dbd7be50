import ArbiterClientTool
import Testing

/// The command line arbiter-watch and arbiter-press share.
@Suite struct ToolCommandLineTests {
    typealias UsageError = ToolCommandLine.UsageError

    func read(_ arguments: [String]) throws(UsageError) -> ToolCommandLine {
        var hold = false
        let line = try ToolCommandLine(program: "arbiter-press", usage: "usage", arguments: arguments) { flag, value throws(UsageError) in
            switch flag {
            case "--hold": hold = true
            case "--for": _ = try value()
            default: return false
            }
            return true
        }
        #expect(hold == arguments.contains("--hold"))
        return line
    }

    @Test func sharedFlagsAndPositionalsInAnyOrder() throws {
        let line = try read(["--host", "a:1", "demo", "--hold", "--host", "b:2", "--name", "ann", "--key", "k", "go"])
        #expect(line.servers == ["a:1", "b:2"])
        #expect(line.name == "ann" && line.key == "k")
        #expect(line.positional == ["demo", "go"])
        #expect(!line.wantsHelp)
    }

    @Test func defaultsNameTheToolAndTheLocalServer() throws {
        let line = try read(["demo", "go"])
        #expect(line.servers == ["127.0.0.1:7070"])
        #expect(line.name.hasPrefix("press-"))
        #expect(line.key == nil)
    }

    @Test func aToolsOwnFlagComesFirstAndTakesItsValue() throws {
        #expect(try read(["demo", "--for", "2", "go"]).positional == ["demo", "go"])
        #expect(throws: UsageError(message: "--for needs a value")) { try read(["demo", "go", "--for"]) }
    }

    @Test func badInputIsNamed() {
        #expect(throws: UsageError(message: "unknown option --bogus")) { try read(["--bogus"]) }
        #expect(throws: UsageError(message: "--host needs a value")) { try read(["demo", "--host"]) }
        #expect((try? read(["-h"]))?.wantsHelp == true)
    }
}
