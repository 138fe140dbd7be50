import ArbiterTestSupport
import Foundation
import Testing

@Suite("end to end: signals and crashes")
struct CrashAndSignalTests {
    func temporaryPath(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
    }

    @Test func sigtermReleasesSaysGoodbyeAndExitsZeroQuickly() throws {
        let arbiter = try ArbiterProcess(["--port", "0"])
        let member = try LineClient(port: arbiter.port)
        member.send("HELLO m\nJOIN demo")
        _ = try member.expect("JOINED demo name=m")
        let owner = try LineClient(port: arbiter.port)
        owner.send("HELLO o\nDOWN demo sos")
        _ = try owner.expect("GRANTED demo sos")
        let started = Date()
        kill(arbiter.process.processIdentifier, SIGTERM)
        #expect(try arbiter.waitForExit(timeout: 5) == 0)
        #expect(Date().timeIntervalSince(started) < 2)
        let lines = try member.readLines(through: "OK BYE")
        #expect(lines.contains { $0.hasPrefix("RELEASED demo sos reason=shutdown owner=o") })
        #expect(lines.last == "OK BYE reason=shutdown")
    }

    /// Fences never go back: kill -9 in the middle of a load, restart on the same
    /// journal, and the next fence is above every fence any client was given. The
    /// journal is kept small, so the kill also lands among run-time compactions.
    @Test func killNineDuringLoadNeverReissuesAFence() throws {
        let journal = temporaryPath("journal")
        defer { try? FileManager.default.removeItem(atPath: journal) }
        let arbiter = try ArbiterProcess(["--port", "0", "--journal", journal, "--rate", "0", "--journal-max-bytes", "65536"])
        let port = arbiter.port
        let highest = ManagedHighest()
        let group = DispatchGroup()
        for worker in 0..<4 {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                guard let c = try? LineClient(port: port) else { return }
                c.send("HELLO w\(worker)")
                guard (try? c.expect("OK HELLO")) != nil else { return }
                let button = ["b1", "sos", "talk", "b2"][worker]
                for _ in 0..<100_000 {
                    c.send("DOWN demo \(button)\nUP demo \(button)")
                    guard let granted = try? c.readLine(timeout: 2) else { return }
                    if let f = field("fence", of: granted), let fence = Int(f) { highest.note(fence) }
                    guard (try? c.readLine(timeout: 2)) != nil else { return }
                }
            }
        }
        // Let the load run, then kill the server without warning.
        highest.wait(forAtLeast: 3000, timeout: 2)
        kill(arbiter.process.processIdentifier, SIGKILL)
        _ = try arbiter.waitForExit(timeout: 5)
        #expect(group.wait(timeout: .now() + 10) == .success)
        let before = highest.value
        #expect(before > 100, "the load ran (\(before) fences handed out)")
        #expect(arbiter.stderrContains("msg=\"journal compacted\""))

        let restarted = try ArbiterProcess(["--port", "0", "--journal", journal])
        let c = try LineClient(port: restarted.port)
        c.send("DOWN demo b3")
        let fence = Int(field("fence", of: try c.expect("GRANTED"))!)!
        #expect(fence > before, "fence \(fence) after restart, \(before) before the kill")
        c.send("HISTORY demo 1")
        #expect(try c.expect("RECORD").contains("fence=\(fence)"))
    }
}

/// The highest fence seen by any worker thread.
final class ManagedHighest: @unchecked Sendable {
    /// Broadcast at every fence, so a waiter wakes on the fence itself.
    private let lock = NSCondition()
    private var highest = 0

    func note(_ fence: Int) {
        lock.lock()
        highest = max(highest, fence)
        lock.broadcast()
        lock.unlock()
    }

    /// Returns once a worker saw `fence` or above, or after `timeout` seconds.
    func wait(forAtLeast fence: Int, timeout: Double) {
        let end = Date(timeIntervalSinceNow: timeout)
        lock.lock()
        defer { lock.unlock() }
        while highest < fence, lock.wait(until: end) {}
    }

    var value: Int {
        lock.lock()
        defer { lock.unlock() }
        return highest
    }
}
