import ArbiterServer
import Dispatch
import Foundation

// The arbiter executable: flags, config, signals, start.

let arguments = Array(CommandLine.arguments.dropFirst())
let options: ArbiterOptions
do {
    options = try ArbiterOptions.parse(arguments)
} catch {
    FileHandle.standardError.write(Data("error: \(error.message)\nRun 'arbiter --help' for usage.\n".utf8))
    exit(64)
}
if options.showHelp {
    print(ArbiterOptions.help)
    exit(0)
}
if options.showVersion {
    print(ArbiterOptions.version)
    exit(0)
}

var configuration = ServerConfiguration()
options.apply(to: &configuration)
// Every connection is a descriptor: take all the kernel allows this process.
var limit = rlimit()
if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max {
    limit.rlim_cur = limit.rlim_max
    _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
}
let log = ServerLog(level: options.logLevel)
if let path = options.configPath {
    do {
        configuration.panels = try ConfigLoader.load(path: path)
    } catch {
        log.error("bad configuration; not starting", ["error": error.description])
        FileHandle.standardError.write(Data("error: \(error.description)\n".utf8))
        exit(78)
    }
}

let server = ArbiterServer(configuration: configuration)
do {
    try server.start()
} catch let damaged as JournalDamaged {
    log.error("damaged journal; not starting", ["path": damaged.path, "line": "\(damaged.line)"])
    FileHandle.standardError.write(Data("error: \(damaged)\n".utf8))
    exit(78)
} catch {
    FileHandle.standardError.write(Data("error: cannot start: \(error)\n".utf8))
    exit(1)
}

SignalShutdown.install(for: server, log: log)

// The main thread only waits: everything runs on Dispatch queues. (Not dispatchMain():
// it ends the main thread in a way valgrind cannot follow, and callgrind is how the
// instructions per request are counted.)
DispatchSemaphore(value: 0).wait()
