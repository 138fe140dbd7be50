import ArbiterCluster
import ArbiterClusterTestSupport
import Foundation

@testable import ArbiterClusterServer
@testable import ArbiterServer

/// The relay links of in-process nodes: a frame sent to a node is handed to that node's
/// cluster context, in order per sender. A node can be cut off, as a dead link would be.
final class TestRelayHub: @unchecked Sendable {
    private let lock = NSLock()
    private let delayQueue = DispatchQueue(label: "test.relay.delay")
    /// Weakly: each context's relay (a `Sender`) holds this hub.
    private var registered: [String: Weak] = [:]
    private var contexts: [String: ClusterContext] { registered.compactMapValues(\.context) }

    private struct Weak {
        weak var context: ClusterContext?
    }
    private var cut: Set<String> = []
    /// Frames from these nodes vanish, and nobody hears of it (a process killed with -9
    /// whose last words never left it).
    private var silenced: Set<String> = []
    /// Frames to these nodes vanish without anyone hearing of it (a stalled link).
    private var swallowed: Set<String> = []
    /// Frames to these nodes arrive this many milliseconds late (a slow link).
    private var delays: [String: Int] = [:]
    /// Frames to these nodes wait here, in order, until `release(framesTo:)`: a reply
    /// that must arrive after something else happened, however slow the machine is.
    private var held: [String: [(message: RelayMessage, from: String)]] = [:]
    /// Only frames from this node are held (`hold(framesTo:from:)`); from any, if absent.
    private var heldFrom: [String: String] = [:]
    /// Sees every frame as it is sent, on the sender's thread.
    private var observer: (@Sendable (RelayMessage) -> Void)?

    func observeSends(_ body: @escaping @Sendable (RelayMessage) -> Void) {
        lock.lock()
        observer = body
        lock.unlock()
    }

    /// The context registered as `node`, if it is still alive.
    func context(_ node: String) -> ClusterContext? {
        lock.lock()
        defer { lock.unlock() }
        return contexts[node]
    }

    func register(_ node: String, _ context: ClusterContext) {
        lock.lock()
        registered[node] = Weak(context: context)
        lock.unlock()
    }

    /// Frames to and from `node` are dropped from now on, and the others hear its link
    /// went down.
    func cutOff(_ node: String) {
        lock.lock()
        cut.insert(node)
        let others = contexts.filter { $0.key != node }.map(\.value)
        lock.unlock()
        for other in others { other.linkDown(node) }
    }

    /// Every link of `node` drops and is dialled again at once: both sides hear of the
    /// drop, frames keep flowing.
    func flap(_ node: String) {
        lock.lock()
        let flapped = contexts[node]
        let others = contexts.filter { $0.key != node }
        lock.unlock()
        for (name, other) in others {
            other.linkDown(node)
            flapped?.linkDown(name)
        }
    }

    func silence(framesFrom node: String, _ silent: Bool) {
        lock.lock()
        if silent { silenced.insert(node) } else { silenced.remove(node) }
        lock.unlock()
    }

    func delay(framesTo node: String, milliseconds: Int) {
        lock.lock()
        delays[node] = milliseconds
        lock.unlock()
    }

    func hold(framesTo node: String) {
        lock.lock()
        if held[node] == nil { held[node] = [] }
        lock.unlock()
    }

    /// Holds only what `sender` sends to `node` (one link slow, the others not).
    func hold(framesTo node: String, from sender: String) {
        lock.lock()
        if held[node] == nil { held[node] = [] }
        heldFrom[node] = sender
        lock.unlock()
    }

    /// Hands the held frames over in the order they were sent; frames sent meanwhile
    /// queue behind them, so the order holds.
    func release(framesTo node: String) {
        while true {
            lock.lock()
            guard let first = held[node]?.first else {
                held[node] = nil
                heldFrom[node] = nil
                lock.unlock()
                return
            }
            held[node]?.removeFirst()
            let target = contexts[node]
            lock.unlock()
            target?.receive(first.message, from: first.from)
            Changes.bump()
        }
    }

    func swallow(framesTo node: String, _ on: Bool = true) {
        lock.lock()
        if on { swallowed.insert(node) } else { swallowed.remove(node) }
        lock.unlock()
    }

    func sender(for node: String) -> any RelaySender { Sender(hub: self, from: node) }

    fileprivate func deliver(_ message: RelayMessage, from: String, to: String) {
        lock.lock()
        let target = cut.contains(from) || cut.contains(to) || swallowed.contains(to) || silenced.contains(from) ? nil : contexts[to]
        let delay = delays[to]
        let observer = observer
        if target != nil, held[to] != nil, heldFrom[to].map({ $0 == from }) ?? true {
            held[to]?.append((message, from))
            lock.unlock()
            observer?(message)
            Changes.bump()
            return
        }
        lock.unlock()
        observer?(message)
        guard let target else { return }
        guard let delay else {
            target.receive(message, from: from)
            // After: the frame's work is in its panel's queue, where a check that enters
            // the queue finds it done.
            return Changes.bump()
        }
        // One serial queue per hub keeps the delayed frames in order. A slow link's
        // latency, scheduled: nothing waits here, and a test waits for the frame's effect.
        delayQueue.asyncAfter(deadline: .now() + .milliseconds(delay)) {
            target.receive(message, from: from)
            Changes.bump()
        }
    }

    private final class Sender: RelaySender, @unchecked Sendable {
        let hub: TestRelayHub
        let from: String

        init(hub: TestRelayHub, from: String) {
            self.hub = hub
            self.from = from
        }

        func send(_ message: RelayMessage, toNode node: String, address: String, leaseEpoch: UInt64) {
            // As `RelayPeer.enqueue`: a frame of a lease that lapsed is not sent.
            if leaseEpoch != 0, let context = hub.context(from), !context.outputStands(leaseEpoch) { return }
            hub.deliver(message, from: from, to: node)
        }

        /// Decoded as a link would: an encoder that writes a frame wrong fails the tests
        /// that relay presses.
        func send(encoded frame: [UInt8], toNode node: String, address: String, leaseEpoch: UInt64) {
            var decoder = RelayFrameDecoder()
            decoder.append(frame)
            guard let message = try? decoder.next() else { fatalError("an encoded relay frame does not decode") }
            send(message, toNode: node, address: address, leaseEpoch: leaseEpoch)
        }
    }
}
