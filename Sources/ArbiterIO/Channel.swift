/// One socket of an `EventLoop`: its descriptor, its place in the loop's table, and its
/// bounded output. What the bytes mean is a subclass's (ArbiterServer's `Connection`).
///
/// A class to subclass rather than a generic or a protocol: the loop's table holds
/// `Channel` references and calls the subclass through the vtable, which costs a few
/// instructions per call (a generic table here cost 500-900 per press, docs/ARCHITECTURE.md).
///
/// Public (and its fields too) only because a subclass in another module needs `open`,
/// and the `@inlinable` pieces of a public class may only touch what is public.
///
/// Its fields have two owners, and each group says which: the loop's queue (the slot),
/// and the lock (`withLock`: output, and everything another thread may touch). A
/// subclass may guard fields of its own with the same lock, so that what it appends and
/// how it is framed change together. Everything is `final`: only the hooks on
/// `EventLoop` are overridden. Hot properties are `@exclusivity(unchecked)`: their owner
/// already serializes every access. That holds only for code compiled in this module (or
/// inlined from it), so other modules reach the hot ones through the `@inlinable` members.
open class Channel: @unchecked Sendable {
    public final let fd: Int32
    /// The loop that reads this socket; it owns the table the channel sits in.
    public final let loop: EventLoop
    /// Every channel's unsent output together, bounded.
    public final let budget: OutputBudget
    /// Tests only: output goes here instead of `fd` (which is then -1).
    public final let sink: EmbeddedSink?
    /// Tells a reused slot's old registrations from the new one's (part of `epollData`).
    public final let generation: UInt32

    // MARK: Owned by `loop.queue`

    /// Where in the loop's table the channel sits; part of its epoll data.
    @exclusivity(unchecked) public final var slot = -1

    // MARK: Guarded by `withLock`

    @usableFromInline final let lock = Locked(OwnerState())
    /// Unsent output and the socket's EPOLLOUT interest.
    @exclusivity(unchecked) public final var output = OutputBuffer()
    /// Whether output is accepted, and whether the socket closes once it is written.
    @exclusivity(unchecked) public final var gate = OutputGate.open
    /// Someone will flush soon (it is on a flush list).
    @exclusivity(unchecked) public final var dirty = false
    /// Unsent bytes allowed before the peer counts as not reading.
    @exclusivity(unchecked) public final var outboundLimit: Int
    /// The part of `pending` counted in `budget`, in whole 4 KiB units, so a small reply
    /// written at once never touches the total.
    @exclusivity(unchecked) public final var accounted = 0
    /// The epoch the oldest unsent output was made under (0: unconditional output):
    /// a write first asks the loop whether it still stands (`EventLoop.outputStands`).
    @exclusivity(unchecked) public final var outputEpoch: UInt64 = 0
    /// When the oldest output not yet tried on the socket was made, if it has a time
    /// limit (monotonic ms; 0: none): a relaying node's output from its leader's frames.
    @exclusivity(unchecked) public final var outputStampMs: Int64 = 0

    /// Public rather than package: a package init of an open class makes Swift 6.0 warn of
    /// an "infinite recursion" in every subclass.
    public init(fd: Int32, generation: UInt32, loop: EventLoop, outboundLimit: Int, budget: OutputBudget, sink: EmbeddedSink?) {
        self.fd = fd
        self.generation = generation
        self.loop = loop
        self.outboundLimit = outboundLimit
        self.budget = budget
        self.sink = sink
    }

    /// Runs `body` holding the channel's lock. Inlinable: every append of the press path
    /// takes it from ArbiterServer.
    @inlinable @inline(__always)
    public final func withLock<R>(_ body: () throws -> R) rethrows -> R {
        try lock.withLock { _ in try body() }
    }

    /// Lets `body` add to the unsent bytes. Under the lock. Subclasses append through it:
    /// `@exclusivity(unchecked)` holds only for accesses compiled in this module (or
    /// inlined from it), so a direct `output.bytes` from another module would pay the
    /// runtime exclusivity check on every append.
    @inlinable @inline(__always)
    public final func appendingOutput<R>(_ body: (inout [UInt8]) -> R) -> R {
        body(&output.bytes)
    }

    /// Whether output is accepted at all (`gate`). Under the lock.
    @inlinable public final var acceptsOutput: Bool { gate.acceptsOutput }

    /// Unsent bytes. Under the lock.
    @inlinable public final var pending: Int { output.pending }

    /// Keeps `epoch` as the epoch of the unsent output, unless older output holds
    /// one already. Under the lock; inlinable for the exclusivity reason above.
    @inlinable public final func markOutputEpoch(_ epoch: UInt64, stampMs: Int64 = 0) {
        if outputEpoch == 0 { outputEpoch = epoch }
        // Output that waits behind a reader who does not read is late by the reader's
        // doing, not by a pause of this node: only what goes straight out is timed.
        if outputStampMs == 0, !output.waitingWritable { outputStampMs = stampMs }
    }

    /// The value registered with epoll: slot and generation.
    @inlinable public final var epollData: UInt64 { UInt64(UInt32(truncatingIfNeeded: slot)) | UInt64(generation) << 32 }
}
