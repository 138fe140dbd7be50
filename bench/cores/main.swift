import ArbiterCore
import ArbiterIO
import Dispatch
import Foundation

// arbiter-cores: how the arbitration layer scales with cores when panels are
// independent. P panels, each a PanelCore owned by its own serial queue as in the
// server; T threads each drive a share of the panels, entering each panel's queue with
// `sync` for a DOWN and an UP, as a reactor does. No sockets: this isolates the part of
// the server that must be serial per panel, to show it is not serial across panels.
// Usage: arbiter-cores [panels] [threads] [seconds]      (defaults 8 1 3)

let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let panels = arguments.count > 0 ? arguments[0] : 8
let threads = arguments.count > 1 ? arguments[1] : 1
let seconds = arguments.count > 2 ? arguments[2] : 3

final class Panel: @unchecked Sendable {  // `core` is touched only on `queue`
    let queue: DispatchQueue
    var core: PanelCore
    var output = PanelOutput()

    init(_ i: Int) {
        queue = DispatchQueue(label: "panel.\(i)")
        let buttons = (1...100).map { ButtonConfig(id: "b\($0)", kind: .tap, group: "g\($0)", timeoutMs: 0) }
        core = PanelCore(config: PanelConfig(id: "load\(i)", buttons: buttons))
    }
}

/// The threads' cycle counts, added once each at the end.
final class Tally: @unchecked Sendable {  // guarded by `lock`
    private let lock = Locked(())
    private var sum = 0

    func add(_ n: Int) {
        lock.withLock { _ in sum += n }
    }

    var total: Int {
        lock.withLock { _ in sum }
    }
}

/// Lock cycles per second with `threads` threads over `panels` panels. Not on the main
/// actor: the worker threads share these locals.
nonisolated func measure(panels: Int, threads: Int, seconds: Int) -> Int {
    let hosts = (0..<panels).map { Panel($0) }
    let tally = Tally()
    let deadline = SystemClock.monotonic.nanoseconds() + Int64(seconds) * 1_000_000_000
    let group = DispatchGroup()
    for t in 0..<threads {
        group.enter()
        Thread.detachNewThread {
            let mine = hosts.indices.filter { $0 % threads == t }.map { hosts[$0] }
            var cycles = 0
            var session = 1
            while SystemClock.monotonic.nanoseconds() < deadline {
                for _ in 0..<1000 {
                    for panel in mine {
                        session = session % 64 + 1
                        let b = session % 100
                        let now = Instant(milliseconds: SystemClock.monotonic.milliseconds())
                        panel.queue.sync {
                            panel.output.removeAll()
                            panel.core.handle(
                                .press(.down(panel: 0, button: b)), session: SessionID(session), name: "c\(session)",
                                access: .admin, now: now, into: &panel.output)
                            panel.core.handle(
                                .press(.up(panel: 0, button: b)), session: SessionID(session), name: "c\(session)",
                                access: .admin, now: now, into: &panel.output)
                        }
                        cycles += 1
                    }
                }
            }
            tally.add(cycles)
            group.leave()
        }
    }
    group.wait()
    return tally.total / seconds
}

let rate = measure(panels: panels, threads: threads, seconds: seconds)
print("arbiter-cores: \(panels) panels, \(threads) thread(s), \(seconds) s: \(rate) lock cycles/s")
