import ArbiterIO
import Glibc

/// How both executables meet a bad command line: the error and where help is on stderr,
/// then exit status 64 (EX_USAGE), before anything has started.
public enum CommandLineParse {
    public static func orExit<Options>(program: String, _ parse: () throws(UsageError) -> Options) -> Options {
        do {
            return try parse()
        } catch {
            _ = Sys.writeAll(STDERR_FILENO, Array(report(error, program: program).utf8))
            exit(64)
        }
    }

    public static func report(_ error: UsageError, program: String) -> String {
        "error: \(error.message)\nRun '\(program) --help' for usage.\n"
    }
}
