extension Channel {
    public enum AppendOutcome {
        /// Added; already on someone's flush list.
        case queued
        /// Added; the caller must put the channel on its flush list.
        case needsFlush
        /// The peer is gone or not reading; nothing was added.
        case dropped
        /// This append passed the outbound bound: the peer must be disconnected.
        case overflow
        /// Added, and all peers together now have more unsent output than allowed:
        /// the caller flushes this one and sheds the largest backlogs.
        case overBudget
    }

    public enum FlushOutcome {
        case done
        /// Everything is written and the channel asked to be closed afterwards.
        case closeNow
        /// The socket failed; the loop will see it and close.
        case failed
        /// The output was made under an epoch the owner no longer stands by
        /// (`EventLoop.outputStands`): it was dropped unsent, and the channel must close.
        case stale
    }

    /// Whether an append may add to `output` now. Under the lock.
    @inlinable public final var acceptsAppend: Bool { gate.acceptsOutput && output.pending <= outboundLimit }

    /// After bytes were added to `output`: enforces the bound and the budget, and says
    /// whether the caller must enlist the channel. Under the lock; inlinable, as every
    /// reply and event of the press path passes here.
    @inlinable public final func appended() -> AppendOutcome {
        if output.pending > outboundLimit { return .overflow }
        // Most replies leave at once: below one unit nothing is counted or looked up.
        let overBudget = (accounted != 0 || output.pending >= OutputBudget.unit) && budget.account(self)
        if dirty { return overBudget ? .overBudget : .queued }
        dirty = true
        return overBudget ? .overBudget : .needsFlush
    }

    /// After the last bytes were added (`appended()` said `outcome`): no more output is
    /// accepted, and the socket closes once they are written. Last words past the bound
    /// still go, since the channel closes after them anyway. Under the lock.
    package final func sealed(after outcome: AppendOutcome) -> AppendOutcome {
        gate = .draining
        switch outcome {
        case .queued, .needsFlush, .overBudget, .dropped:
            return outcome
        case .overflow:
            if dirty { return .queued }
            dirty = true
            return .needsFlush
        }
    }

    /// Writes pending output without blocking; what does not fit waits for EPOLLOUT.
    package final func flush() -> FlushOutcome {
        withLock {
            dirty = false
            switch gate {
            case .open, .draining: break
            case .discarding, .closed: return .done
            }
            if output.waitingWritable { return .done }
            let outcome = writePending()
            if accounted != 0 { _ = budget.account(self) }
            return outcome
        }
    }

    /// The loop saw EPOLLOUT.
    package final func writable() -> FlushOutcome {
        withLock {
            switch gate {
            case .open, .draining, .discarding: break
            case .closed: return .done
            }
            output.waitingWritable = false
            let outcome = writePending()
            if accounted != 0 { _ = budget.account(self) }
            if !output.waitingWritable { output.updateInterest(fd: fd, epfd: loop.epfd, data: epollData) }
            return outcome
        }
    }

    /// Stops all output for good and frees what was unsent. Under the lock.
    package final func shut(_ to: OutputGate) {
        gate = to
        output.discard()
        _ = budget.account(self)
    }

    private func writePending() -> FlushOutcome {
        if outputEpoch != 0 {
            // Checked here, at the write, not when the output was made: a process paused
            // (SIGSTOP, a VM freeze) between the two wakes with a GRANTED in this buffer
            // that another node may have overtaken meanwhile (bench/nemesis.py saw one).
            guard output.pending == 0 || loop.outputStands(epoch: outputEpoch, markedAtMs: outputStampMs) else {
                shut(.discarding)
                outputEpoch = 0
                outputStampMs = 0
                return .stale
            }
            // Tried now: from here on it goes at the reader's pace.
            outputStampMs = 0
        }
        if let sink, output.pending > 0 {
            sink.write(output.bytes[output.start...])
            output.consumeAll()
        }
        switch output.write(fd: fd, epfd: loop.epfd, data: epollData) {
        case .blocked: return .done
        case .failed: return .failed
        case .drained: outputEpoch = 0
        }
        switch gate {
        case .draining: return .closeNow
        case .open, .discarding, .closed: return .done
        }
    }
}
