import ArbiterServer
import ArbiterIO
import Dispatch
import Synchronization

/// The event loop of a node's relay links (`RelayLink`, dialled and accepted): ArbiterIO's
/// epoll, read buffer, EPOLLOUT, lingering and idle spin, as the reactors have them. The
/// relay's own policy (the handshake, frames, liveness, the lease check at each write)
/// is the links'; each hook hands its channel to its link.
///
/// One loop carries every link of a node: a relaying node's traffic is one link to each
/// leader, and a frame's work mostly runs in its panel's queue, entered from here
/// (`RelayNetwork`'s `onMessage`), as a reactor enters it.
final class RelayLoop: EventLoop, @unchecked Sendable {
    let log: ServerLog
    /// Relay output is bounded per node (`RelayOptions.maxOutboundBytes`), not together.
    let budget = OutputBudget(limit: .max)
    private let stands: @Sendable (_ leaseEpoch: UInt64) -> Bool
    private let generations = Atomic<UInt32>(0)

    init(options: RelayOptions, log: ServerLog, outputStands: @escaping @Sendable (_ leaseEpoch: UInt64) -> Bool) throws(Sys.Failure) {
        self.log = log
        self.stands = outputStands
        try super.init(index: 0, label: "arbiter.relay.loop", sendBufferBytes: nil, idleSpinNs: options.idleSpinNs)
    }

    /// Tells a reused slot's old registration from a new one's.
    func nextGeneration() -> UInt32 {
        generations.wrappingAdd(1, ordering: .relaxed).newValue
    }

    /// Takes a socket whose non-blocking connect is under way into the table, watched for
    /// EPOLLOUT: writable once connected (or failed), `RelayLink.wrote` then. Flushes
    /// leave its output alone meanwhile. On `queue`.
    func registerConnecting(_ link: RelayLink) {
        assertOnQueue()
        link.withLock { link.output.waitingWritable = true }
        register(link)
        guard holds(link) else { return }
        link.withLock { link.output.updateInterest(fd: link.fd, epfd: epfd, data: link.epollData) }
    }

    // MARK: Hooks: each channel here is a `RelayLink`

    override func received(_ bytes: UnsafeBufferPointer<UInt8>, on channel: Channel, flush: inout FlushList) {
        unsafeDowncast(channel, to: RelayLink.self).received(bytes)
    }

    override func wrote(_ channel: Channel) {
        unsafeDowncast(channel, to: RelayLink.self).wrote()
    }

    override func closing(_ channel: Channel) -> Bool {
        unsafeDowncast(channel, to: RelayLink.self).leavingPeer()
        return true
    }

    override func closed(_ channel: Channel, reason: String) {
        unsafeDowncast(channel, to: RelayLink.self).closed(reason: reason)
    }

    override func outputStands(epoch: UInt64, markedAtMs: Int64) -> Bool {
        stands(epoch)
    }

    override var staleOutputReason: String { RelayLink.Closing.staleOutput.description }

    override func trouble(_ event: LoopTrouble) {
        switch event {
        case .acceptFailed: break
        case .registrationFailed(let e): log.warning("epoll_ctl failed", ["errno": "\(e)"])
        case .missedWakeup: log.warning("ready sockets found by the sweep: the relay loop's wake-up was missed", [:])
        }
    }
}
