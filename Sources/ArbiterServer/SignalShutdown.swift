import ArbiterIO
import Dispatch
import Glibc

/// SIGINT and SIGTERM lead to a graceful `shutdown()` and exit status 0.
///
/// Signals are taken by Dispatch sources, not async signal handlers, so the shutdown
/// runs as ordinary code on a queue. (This lives here, not in the executable's
/// top-level code, which Swift 6 isolates to the main actor: a handler closure
/// written there would assert the main queue when a signal arrives on another.)
public enum SignalShutdown {
    nonisolated(unsafe) private static var sources: [DispatchSourceSignal] = []

    public static func install(for server: ArbiterServer, log: ServerLog) {
        signal(SIGPIPE, SIG_IGN)
        let queue = DispatchQueue(label: "arbiter.signals")
        for sig in [SIGINT, SIGTERM] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: queue)
            source.setEventHandler {
                log.info("shutting down", ["signal": sig == SIGINT ? "SIGINT" : "SIGTERM"])
                server.shutdown()
                exit(0)
            }
            source.resume()
            sources.append(source)
        }
    }
}
