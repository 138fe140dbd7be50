import ArbiterCluster
import ArbiterClusterTestSupport
import ArbiterIO
@testable import ArbiterClusterServer
@testable import ArbiterServer
import ArbiterTestSupport
import Dispatch
import Foundation
import Glibc
import Testing

/// Two or more relay networks in one process, each behind a real server on loopback.
@Suite("relay network")
struct RelayNetworkTests {
    @Test func everyMessageCrossesInOrderBothWaysOnOneLink() throws {
        let a = try RelayTestNode("n1")
        let b = try RelayTestNode("n2")
        let toB = RelayTestNode.messages(700, tag: "a")
        for message in toB { a.send(message, to: b) }
        #expect(eventually { b.received.count == toB.count })
        #expect(b.received == toB)
        #expect(b.seen.withLock { $0.messages.allSatisfy { $0.from == "n1" } })
        // The answer goes back on the link n1 opened: one link for the pair.
        let toA = RelayTestNode.messages(700, tag: "b")
        for message in toA { b.send(message, to: a) }
        #expect(eventually { a.received.count == toA.count })
        #expect(a.received == toA)
        #expect(a.network.statistics.linksOpened == 1)
        #expect(b.network.statistics.linksOpened == 1)
        #expect(a.network.linkCount == 1 && b.network.linkCount == 1)
        #expect(eventually { a.network.statistics.framesOut == 700 })
        #expect(a.network.statistics.framesIn == 700)
        // Counted after the write returns: the peer may have read the frames first.
        #expect(eventually { b.network.statistics.framesOut == 700 })
        #expect(b.network.statistics.framesIn == 700)
        #expect(a.seen.withLock { $0.ups } == ["n2"] && b.seen.withLock { $0.ups } == ["n1"])
        #expect(a.network.statistics.dropped == 0 && b.network.statistics.dropped == 0)
    }

    @Test func bothSendingAtOnceKeepsEachDirectionsOrder() throws {
        let a = try RelayTestNode("n1")
        let b = try RelayTestNode("n2")
        let toB = RelayTestNode.messages(300, tag: "a")
        let toA = RelayTestNode.messages(300, tag: "b")
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) { for m in toB { a.send(m, to: b) } }
        DispatchQueue.global().async(group: group) { for m in toA { b.send(m, to: a) } }
        #expect(group.wait(timeout: .now() + 10) == .success)
        #expect(eventually { b.received.count == toB.count && a.received.count == toA.count })
        #expect(b.received == toB)
        #expect(a.received == toA)
        // One or two links, but never more than one dialled each way.
        #expect(a.network.statistics.linksOpened <= 2)
    }

    @Test func sendersOnManyThreadsKeepTheirOwnOrder() throws {
        let a = try RelayTestNode("n1")
        let b = try RelayTestNode("n2")
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for i in 0..<250 {
                a.send(.event(panel: "p\(thread)", term: 1, seq: UInt64(i), line: []), to: b)
            }
        }
        #expect(eventually { b.received.count == 1000 })
        for thread in 0..<4 {
            let seqs = b.received.compactMap { m -> UInt64? in
                if case .event(let panel, _, let seq, _) = m, panel == "p\(thread)" { return seq }
                return nil
            }
            #expect(seqs == (0..<250).map(UInt64.init))
        }
    }

    @Test func aPeerThatDiesIsReportedDownOnceAndTheSenderReconnectsWhenItReturns() throws {
        let a = try RelayTestNode("n1")
        var b = try RelayTestNode("n2")
        let port = b.port
        a.send(.sessionGone(origin: "n1", session: 1), to: b)
        #expect(eventually { b.received.count == 1 })
        b.stop()
        #expect(eventually { a.seen.withLock { $0.downs } == ["n2"] })
        #expect(a.network.linkCount == 0)
        // While it is away, what is sent is dropped (and said so), never kept for later.
        a.network.send(.sessionGone(origin: "n1", session: 2), toNode: "n2", address: "127.0.0.1:\(port)")
        #expect(eventually { a.network.statistics.dropped >= 1 })
        #expect(eventually { !a.seen.withLock { $0.undelivered }.isEmpty })
        b = try RelayTestNode("n2", port: port)
        var request: UInt64 = 3
        let back = eventually {
            a.network.send(.sessionGone(origin: "n1", session: request), toNode: "n2", address: "127.0.0.1:\(port)")
            request += 1
            return eventually(seconds: 0.2) { !b.received.isEmpty }
        }
        #expect(back)
        #expect(a.seen.withLock { $0.downs } == ["n2"])
        #expect(a.seen.withLock { $0.ups } == ["n2", "n2"])
        #expect(a.network.linkCount == 1)
        // Nothing from before it died arrives at the new node.
        #expect(
            b.received.allSatisfy {
                if case .sessionGone(_, let r, _, _) = $0 { return r >= 3 }
                return false
            })
    }

    @Test func aReaderThatStopsReadingNeitherBlocksSendNorGrowsMemoryWithoutBound() throws {
        let release = DispatchSemaphore(value: 0)
        // n2's link queue stops in its first delivery, so nothing more is read from it.
        // Once released, every later delivery passes too.
        let b = try RelayTestNode("n2") { _ in if release.wait(timeout: .now() + 30) == .success { release.signal() } }
        defer { release.signal() }
        var options = RelayOptions()
        options.maxOutboundBytes = 1 << 20
        let a = try RelayTestNode("n1", options: options)
        // The link is up first (a bound met while dialling drops without a link down).
        a.send(.event(panel: "demo", term: 1, seq: 0, line: []), to: b)
        #expect(eventually { a.network.linkCount == 1 })
        let line = [UInt8](repeating: 0x41, count: 60_000)
        let done = DispatchSemaphore(value: 0)
        // A thread of its own: if sending blocked, it would hold one of Dispatch's meanwhile.
        Thread {
            // About 30 MB: more than the kernel's buffers both ways and the 1 MiB bound.
            for i in 1...500 { a.send(.event(panel: "demo", term: 1, seq: UInt64(i), line: line), to: b) }
            done.signal()
        }.start()
        #expect(done.wait(timeout: .now() + 20) == .success, "send waited for a peer that does not read")
        // Reported down for its backlog; a slow machine may redial and meet the bound again
        // before the loop ends (n2 does not read the new link either), each time once.
        #expect(eventually { !a.seen.withLock { $0.downs }.isEmpty })
        #expect(eventually { a.network.statistics.linksDown == a.seen.withLock { $0.downs.count } })
        let downs = a.seen.withLock { $0.downs }
        #expect(downs.allSatisfy { $0 == "n2" })
        #expect(a.logLines(containing: "relay link down").filter { $0.contains("the peer does not read") }.count == downs.count)
        #expect(a.network.statistics.dropped > 0)
        // Every drop is told (`onUndelivered` runs on a relay queue, a moment later).
        #expect(eventually { a.seen.withLock { $0.undelivered.reduce(0) { $0 + $1.count } } == a.network.statistics.dropped })
        // Released before n2 stops (`stop` waits for its link's queue).
        release.signal()
        b.stop()
    }

    @Test func aDialToNothingFailsAndDropsWhatWaited() throws {
        let a = try RelayTestNode("n1")
        // A port nobody listens on: bind one, note it, close it.
        let listener = try Sys.listen(host: "127.0.0.1", port: 0, backlog: 1)
        Sys.close(listener.fd)
        a.network.send(.sessionGone(origin: "n1", session: 1), toNode: "n9", address: "127.0.0.1:\(listener.port)")
        a.network.send(.sessionGone(origin: "n1", session: 2), toNode: "n8", address: "not-an-address")
        #expect(eventually { a.network.statistics.dropped == 2 })
        #expect(eventually { a.seen.withLock { $0.undelivered.count } == 2 })
        #expect(a.network.statistics.dialFailures == 2)
        #expect(a.seen.withLock { $0.ups.isEmpty && $0.downs.isEmpty })
        #expect(eventually { a.logLines(containing: "relay dial failed").count == 2 })
        #expect(eventually { a.network.statistics.sockets == 0 })
    }

    @Test func aDialerGreetedAsAClientFailsThatAttemptAndSaysWhy() throws {
        // A server without the hook (or one that greeted before the hello arrived) answers
        // WELCOME where the challenge belongs.
        let plain = try TestServer()
        let a = try RelayTestNode("n1")
        a.network.send(.sessionGone(origin: "n1", session: 1), toNode: "n9", address: "127.0.0.1:\(plain.port)")
        #expect(eventually { a.network.statistics.dialFailures == 1 && !a.logLines(containing: "relay dial failed").isEmpty })
        #expect(a.logLines(containing: "relay dial failed").first?.contains("expected RELAY-CHALLENGE 1") == true)
        #expect(eventually { a.network.statistics.dropped == 1 })
        #expect(a.network.linkCount == 0)
    }

    @Test func stopReportsEveryUpLinkDownAndDropsLaterSends() throws {
        let a = try RelayTestNode("n1")
        let b = try RelayTestNode("n2")
        a.send(.sessionGone(origin: "n1", session: 1), to: b)
        #expect(eventually { b.received.count == 1 })
        a.network.stop()
        #expect(a.seen.withLock { $0.downs } == ["n2"])
        #expect(eventually { b.seen.withLock { $0.downs } == ["n1"] })
        a.send(.sessionGone(origin: "n1", session: 2), to: b)
        #expect(a.network.statistics.dropped == 1)
        #expect(a.network.linkCount == 0)
        // Every descriptor is closed, on both sides.
        #expect(eventually { a.network.statistics.sockets == 0 && b.network.statistics.sockets == 0 })
    }

    @Test func aDialAnsweredByAnotherNodeFails() throws {
        let b = try RelayTestNode("n2")
        let a = try RelayTestNode("n1")
        // n3's address is stale: n2 took it over.
        a.network.send(.sessionGone(origin: "n1", session: 1), toNode: "n3", address: b.address)
        #expect(eventually { !a.logLines(containing: "relay dial failed").isEmpty })
        #expect(a.logLines(containing: "relay dial failed").first?.contains("dialled n3 but n2 answered") == true)
        #expect(b.received.isEmpty)
        #expect(eventually { a.network.statistics.sockets == 0 && b.network.statistics.sockets == 0 })
    }

    @Test func theHandedOffConnectionIsNoClientSession() throws {
        let a = try RelayTestNode("n1")
        let b = try RelayTestNode("n2")
        a.send(.sessionGone(origin: "n1", session: 1), to: b)
        #expect(eventually { b.received.count == 1 })
        let state = try #require(b.server?.server.stateForTesting)
        #expect(state.registry.withLock { $0.count } == 0)
        #expect(state.metrics.value(.connectionsOpened) - state.metrics.value(.connectionsClosed) == 0)
    }
}
