import ArbiterCLI
import ArbiterCluster
import ArbiterEtcd
import ArbiterIO
import ArbiterJournal
import ArbiterClusterServer
import ArbiterServer
import Dispatch
import Foundation

// The arbiter executable: flags, config, signals, start.

let options = CommandLineParse.orExit(program: "arbiter") { () throws(UsageError) in
    try ArbiterOptions.parse(Array(CommandLine.arguments.dropFirst()))
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
Sys.raiseFileLimit(to: Int.max)
let log = ServerLog(level: options.logLevel)
// Refusals are printed once, as `error:` lines, whatever the log level: the operator
// must see them, and a log line saying the same again is noise.
if let path = options.configPath {
    do {
        configuration.panels = try ConfigLoader.load(path: path)
    } catch {
        FileHandle.standardError.write(Data("error: \(error.description)\n".utf8))
        exit(78)
    }
}
if let refusal = ProtectedMode.refusal(
    host: options.host, port: options.port, panels: configuration.panels,
    configPath: options.configPath, openAdmin: options.openAdmin)
{
    FileHandle.standardError.write(Data("error: \(refusal)\n".utf8))
    exit(78)
}
let openPanels = ProtectedMode.openPanels(host: options.host, panels: configuration.panels)
if !openPanels.isEmpty {
    log.warning(
        "protected mode off (--open-admin): anyone who can connect may RESET and KICK on these panels",
        ["host": options.host, "panels": openPanels.map(\.id).joined(separator: ",")])
}

if let endpoints = options.clusterEndpoints, let node = options.node, let advertise = options.advertise, let keyPath = options.clusterKeyPath {
    switch ClusterKeyFile.read(path: keyPath) {
    case .failure(let refusal):
        FileHandle.standardError.write(Data("error: \(refusal.message)\n".utf8))
        exit(78)
    case .success(let key):
        // One record of which members answer, for all three clients (EtcdMemberHealth).
        let health = EtcdMemberHealth(members: endpoints.count)
        var setup = ClusterSetup(
            node: node, advertise: advertise, key: key,
            control: EtcdHTTPClient(endpoints: endpoints, health: health), lease: EtcdHTTPClient(endpoints: endpoints, health: health),
            endpointsDescription: endpoints.map(\.description).joined(separator: ","),
            watch: EtcdHTTPClient(endpoints: endpoints, health: health), timing: ClusterTiming(ttlSeconds: options.clusterTTLSeconds))
        setup.checksAdvertise = options.checksAdvertise
        // Hooked events wait for this client's writes: its own, with half the timeout, so
        // a panel never waits behind the runtime's ranges nor for long on a stalled member.
        setup.hooks = EtcdHTTPClient(endpoints: endpoints, timeoutMilliseconds: 1_000, health: health)
        configuration.cluster = setup
    }
}

let server = ArbiterServer(configuration: configuration)
// Before the start, not after: a signal source on Linux is registered asynchronously, and
// between `signal(SIG_IGN)` and that registration a SIGTERM is dropped. Installed after
// the start, a SIGTERM sent as soon as "listening" was logged could be lost and the
// server would run on (an end-to-end test caught it under load). A signal during the
// start ends the process at once: `shutdown` has nothing to stop yet.
SignalShutdown.install(for: server, log: log)
do {
    try server.start()
} catch let damaged as JournalDamaged {
    log.error("damaged journal; not starting", ["path": damaged.path, "line": "\(damaged.line)"])
    FileHandle.standardError.write(Data("error: \(damaged)\n".utf8))
    exit(78)
} catch let linked as JournalLinked {
    log.error("journal has more than one name; not starting", ["path": linked.path, "links": "\(linked.links)"])
    FileHandle.standardError.write(Data("error: \(linked)\n".utf8))
    exit(78)
} catch let refusal as ClusterStartFailure {
    log.error("cluster refused; not starting", ["reason": refusal.message])
    FileHandle.standardError.write(Data("error: \(refusal.message)\n".utf8))
    exit(1)
} catch {
    FileHandle.standardError.write(Data("error: cannot start: \(error)\n".utf8))
    exit(1)
}

// The main thread only waits: everything runs on Dispatch queues. (Not dispatchMain():
// it ends the main thread in a way valgrind cannot follow, and callgrind is how the
// instructions per request are counted.)
DispatchSemaphore(value: 0).wait()
