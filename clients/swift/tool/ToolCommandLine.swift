import Foundation

/// The command line the client tools share: `--host` (repeatable), `--name`, `--key` and
/// `-h`, one wording for errors, and each tool's own flags through `own`.
public struct ToolCommandLine: Sendable {
    public struct UsageError: Error, Equatable {
        public let message: String

        public init(message: String) { self.message = message }
    }

    public let program: String
    public let usage: String
    public private(set) var hosts: [String] = []
    public private(set) var name: String
    public private(set) var key: String?
    public private(set) var positional: [String] = []
    public private(set) var wantsHelp = false

    /// The servers to try, in order; the default server when none was given.
    public var servers: [String] { hosts.isEmpty ? ["127.0.0.1:7070"] : hosts }

    /// Reads `arguments`. `own` is asked first for every flag: it returns false for one it
    /// does not know, and takes a value by calling the function it is given.
    public init(
        program: String, usage: String, arguments: [String],
        own: (_ flag: String, _ value: () throws(UsageError) -> String) throws(UsageError) -> Bool = { _, _ in false }
    ) throws(UsageError) {
        self.program = program
        self.usage = usage
        self.name = "\(program.split(separator: "-").last ?? "tool")-\(ProcessInfo.processInfo.processIdentifier)"
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            let value = { () throws(UsageError) -> String in
                guard let next = rest.popFirst() else { throw UsageError(message: "\(argument) needs a value") }
                return next
            }
            if try own(argument, value) { continue }
            switch argument {
            case "--host": hosts.append(try value())
            case "--name": name = try value()
            case "--key": key = try value()
            case "-h", "--help": wantsHelp = true
            default:
                if argument.hasPrefix("-") && argument != "-" { throw UsageError(message: "unknown option \(argument)") }
                positional.append(argument)
            }
        }
    }

    /// Reads the process's own arguments: usage errors and `--help` end it here.
    public static func orExit(
        program: String, usage: String, positional count: Int,
        own: (_ flag: String, _ value: () throws(UsageError) -> String) throws(UsageError) -> Bool = { _, _ in false }
    ) -> ToolCommandLine {
        do throws(UsageError) {
            let line = try ToolCommandLine(program: program, usage: usage, arguments: Array(CommandLine.arguments.dropFirst()), own: own)
            if line.wantsHelp {
                line.say(usage)
                exit(0)
            }
            guard line.positional.count == count else { throw UsageError(message: "expected \(count) argument\(count == 1 ? "" : "s")") }
            return line
        } catch {
            FileHandle.standardError.write(Data("\(program): \(error.message)\n\(usage)\n".utf8))
            exit(2)
        }
    }

    /// Unbuffered, so that lines reach a pipe or a log as they happen, in order with
    /// anything else the tool draws.
    public func say(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    public func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("\(program): \(message)\n".utf8))
        exit(2)
    }
}
