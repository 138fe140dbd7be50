import ArbiterCore
import Synchronization

/// Server-wide counters, updated from any queue. Per-panel counters live in each
/// `PanelHost` (owned by its queue, no atomics on the press path) and are summed when
/// /metrics is scraped.
final class Metrics: Sendable {
    let connectionsOpened = Atomic<Int>(0)
    let connectionsClosed = Atomic<Int>(0)
    let localCommands = Atomic<Int>(0)
    let httpRequests = Atomic<Int>(0)
    let webSocketUpgrades = Atomic<Int>(0)
    let slowConsumerDrops = Atomic<Int>(0)
    let rateLimited = Atomic<Int>(0)
    let serverFull = Atomic<Int>(0)
    let missedWakeups = Atomic<Int>(0)
    let hostRefused = Atomic<Int>(0)
    let originRefused = Atomic<Int>(0)
    let keyFailures = Atomic<Int>(0)
    let keyLockedOut = Atomic<Int>(0)
    let keyCeilingRefused = Atomic<Int>(0)
    let outputBudgetCuts = Atomic<Int>(0)

    enum Counter: CaseIterable {
        case connectionsOpened, connectionsClosed, localCommands, httpRequests
        case webSocketUpgrades, slowConsumerDrops, rateLimited, serverFull, missedWakeups
        case hostRefused, originRefused, keyFailures, keyLockedOut, keyCeilingRefused, outputBudgetCuts
    }

    // Atomics cannot be reached through key paths, hence the switches.
    private func atomic<R>(_ counter: Counter, _ body: (borrowing Atomic<Int>) -> R) -> R {
        switch counter {
        case .connectionsOpened: body(connectionsOpened)
        case .connectionsClosed: body(connectionsClosed)
        case .localCommands: body(localCommands)
        case .httpRequests: body(httpRequests)
        case .webSocketUpgrades: body(webSocketUpgrades)
        case .slowConsumerDrops: body(slowConsumerDrops)
        case .rateLimited: body(rateLimited)
        case .serverFull: body(serverFull)
        case .missedWakeups: body(missedWakeups)
        case .hostRefused: body(hostRefused)
        case .originRefused: body(originRefused)
        case .keyFailures: body(keyFailures)
        case .keyLockedOut: body(keyLockedOut)
        case .keyCeilingRefused: body(keyCeilingRefused)
        case .outputBudgetCuts: body(outputBudgetCuts)
        }
    }

    func add(_ counter: Counter, _ n: Int = 1) {
        _ = atomic(counter) { $0.add(n, ordering: .relaxed) }
    }

    func value(_ counter: Counter) -> Int {
        atomic(counter) { $0.load(ordering: .relaxed) }
    }
}

/// Counts of one panel's decisions, owned by the panel's queue.
package struct PanelCounters {
    package var commands = 0
    var grants = 0
    package var denials = 0
    var fires = 0
    var events = 0
    /// Indexed like `ReleaseReason.allCases`.
    package var releases = [Int](repeating: 0, count: ReleaseReason.allCases.count)
    var latency = LatencyHistogram()

    mutating func merge(_ other: PanelCounters) {
        commands += other.commands
        grants += other.grants
        denials += other.denials
        fires += other.fires
        events += other.events
        for i in releases.indices { releases[i] += other.releases[i] }
        latency.merge(other.latency)
    }
}
