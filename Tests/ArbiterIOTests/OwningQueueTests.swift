import ArbiterIO
import Dispatch
import Glibc
import Testing

/// A queue's state checked in every build, release included: the cluster's lease,
/// control and watch queues use it.
@Suite struct OwningQueueTests {
    @Test func itKnowsWhenItRuns() {
        let owner = OwningQueue(label: "test.owner")
        let other = DispatchQueue(label: "test.other")
        #expect(!owner.isCurrent)
        #expect(owner.queue.sync { owner.isCurrent })
        #expect(!other.sync { owner.isCurrent })
        // Inside a sync onto it from another queue: the caller's thread runs it.
        #expect(other.sync { owner.queue.sync { owner.isCurrent } })
        // Another owner of another queue is not current there.
        let second = OwningQueue(label: "test.second")
        #expect(!owner.queue.sync { second.isCurrent })
    }

    @Test func aCheckOnItsQueuePasses() {
        let owner = OwningQueue(label: "test.owner")
        owner.queue.sync { owner.check("the test's state") }
    }

    @Test func aCheckFromAnotherQueueTraps() async {
        await #expect(processExitsWith: .signal(SIGILL)) {
            OwningQueue(label: "test.owner").check("the test's state")
        }
    }
}
