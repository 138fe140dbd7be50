import ArbiterCLI
import ArbiterLoadKit
import Foundation

// arbiter-load: flags, the live progress line, the report and the exit status.

let options = CommandLineParse.orExit(program: "arbiter-load") { () throws(UsageError) in
    try LoadOptions.parse(Array(CommandLine.arguments.dropFirst()))
}
if options.showHelp {
    print(Help.text)
    exit(0)
}
if options.workload == .config {
    print(ConfigWriter.panelJSON(options), terminator: "")
    exit(0)
}
// A peer that vanished must not kill the generator.
signal(SIGPIPE, SIG_IGN)

// The progress line only on a terminal, so logs and pipes get the report alone.
let live = isatty(STDERR_FILENO) == 1
let result = LoadRunner.run(
    options,
    onProgress: live
        ? { p in
            let line = "\r" + LoadReport.progress(p, workload: options.workload)
            FileHandle.standardError.write(Data((line + "\u{1B}[K").utf8))
        } : nil)
if live { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }

print(options.json ? LoadReport.json(result) : LoadReport.text(result))
exit(result.exitCode)
