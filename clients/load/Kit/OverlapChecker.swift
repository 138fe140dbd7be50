import ArbiterIO
import Synchronization

/// Exclusivity checked from the pressers alone, with no member receiving events: the
/// `contend` check that keeps the lock-cycle comparison with Redis apples to apples.
///
/// Every presser reports, on the one monotonic clock of this process, when it *read*
/// each grant (GRANTED, or `+OK` to `SET NX`) and when it *sent* the release (UP, or
/// DEL): the release is stamped just before the write that carries it, the grant just
/// after the read that brought it. The server can only grant a group again after it
/// received the release, which left after its stamp; so in a correct run every grant of
/// a group is read strictly after the previous holder's release was stamped, and while
/// one connection's grant is read and not yet released no other connection reads one.
///
/// Checked online against one `GroupHold` per group, so memory does not grow with the
/// run: a grant takes the group with a compare-exchange (a failure names the other
/// holder), then compares its read time with the last release's send time (equal times
/// count as an overlap). The causal chain stamp -> write -> server -> reply -> read
/// also orders the releasing thread's stores before the granted thread's loads, so
/// several generator threads cannot produce a false report. Fences (arbiter only) must
/// rise along the same chains: above the group's previous grant, and above every fence
/// of the panel read before this grant's DOWN was sent (`fenceFloor`).
///
/// Assumes the server never ends a grant by itself (no `timeout_ms`: `arbiter-load
/// config` writes 0; Redis's PX is 10 s), as in `contend`.
public final class OverlapChecker: Sendable {
    /// What a grant and a release are called in reports (GRANTED/UP, or +OK/DEL).
    let grantWord: String
    let releaseWord: String
    /// Per global button: how it is named, its group and its panel; per group, its name.
    let labels: [String]
    let groupLabels: [String]
    let groupOf: [Int]
    let panelOf: [Int]
    let holds: [GroupHold]
    let marks: [FenceMark]
    /// Times in reports are seconds since this instant.
    let origin: UInt64
    let maxViolations: Int
    let checked = Atomic<Int>(0)
    let found = Locked<(count: Int, kept: [Violation])>((0, []))

    public init(
        labels: [String], groups: [Int], panels: [Int], groupLabels: [String] = [], grantWord: String = "GRANTED", releaseWord: String = "UP",
        origin: UInt64 = LoadClock.now(), maxViolations: Int = 50
    ) {
        self.labels = labels
        self.groupLabels = groupLabels
        self.groupOf = groups
        self.panelOf = panels
        self.grantWord = grantWord
        self.releaseWord = releaseWord
        self.origin = origin
        self.maxViolations = maxViolations
        holds = (0..<((groups.max() ?? -1) + 1)).map { _ in GroupHold() }
        marks = (0..<((panels.max() ?? -1) + 1)).map { _ in FenceMark() }
    }

    /// Grants checked so far (the whole run, warm-up included).
    public var grantsChecked: Int { checked.load(ordering: .relaxed) }
    public var violationCount: Int { found.withLock { $0.count } }
    public var violations: [Violation] { found.withLock { $0.kept } }

    /// The highest fence of `panel` read so far: taken when a DOWN is queued, before it
    /// is written, and handed back to `granted` as its `floor`.
    public func fenceFloor(panel: Int) -> Int64 {
        marks[panel].highest.load(ordering: .acquiring)
    }

    /// `connection` read a grant of `button` at `readAt`. `fence` is -1 for Redis;
    /// `floor` is what `fenceFloor` said before the request was sent (-1: none).
    public func granted(button: Int, by connection: Int, readAt: UInt64, fence: Int64 = -1, floor: Int64 = -1) {
        checked.wrappingAdd(1, ordering: .relaxed)
        let hold = holds[groupOf[button]]
        let me = connection + 1
        let taken = hold.holder.compareExchange(expected: 0, desired: me, ordering: .acquiringAndReleasing)
        if !taken.exchanged {
            // The same connection again would be an idempotent DOWN; contend never sends one.
            guard taken.original != me else { return }
            let other = taken.original - 1
            return violate(
                .grantOverlap, "c\(connection) read a grant of \(group(button)) while c\(other)'s grant of it was read and its \(releaseWord) not yet sent",
                [
                    "c\(other): \(grant(hold.button.load(ordering: .relaxed), hold.fence.load(ordering: .relaxed))) read at \(time(hold.grantAt.load(ordering: .relaxed))), no \(releaseWord) sent yet",
                    "c\(connection): \(grant(button, fence)) read at \(time(readAt))",
                ])
        }
        let by = hold.releasedBy.load(ordering: .relaxed)
        if by != 0 {
            let releasedAt = hold.releasedAt.load(ordering: .relaxed)
            let previousFence = hold.releasedFence.load(ordering: .relaxed)
            // Strings only for a violation: this runs for every grant of the run.
            func evidence() -> [String] {
                [
                    "c\(by - 1): \(grant(hold.releasedButton.load(ordering: .relaxed), previousFence)) read at "
                        + "\(time(hold.releasedGrantAt.load(ordering: .relaxed))), \(releaseWord) sent at \(time(releasedAt))",
                    "c\(connection): \(grant(button, fence)) read at \(time(readAt))",
                ]
            }
            if readAt <= releasedAt {
                violate(
                    .grantOverlap,
                    "c\(connection) read a grant of \(group(button)) not after c\(by - 1)'s \(releaseWord) of the previous grant was sent (equal times count as overlap)",
                    evidence())
            }
            if fence >= 0, previousFence >= 0, fence <= previousFence {
                violate(.grantFence, "fence \(fence) of a grant of \(group(button)) is not above the fence \(previousFence) of the grant before it", evidence())
            }
        }
        if fence >= 0, fence <= floor {
            violate(
                .grantFence, "fence \(fence) is not above fence \(floor), read on the same panel before this request was sent",
                ["c\(connection): \(grant(button, fence)) read at \(time(readAt))"])
        }
        hold.button.store(button, ordering: .relaxed)
        hold.fence.store(fence, ordering: .relaxed)
        hold.grantAt.store(readAt, ordering: .relaxed)
        if fence >= 0 { marks[panelOf[button]].highest.max(fence, ordering: .acquiringAndReleasing) }
    }

    /// `connection` is about to write the release of its grant of `button`; `sentAt` is
    /// stamped before the write. A connection whose grant was itself an overlap (it never
    /// became the holder) leaves the group to the holder.
    public func released(button: Int, by connection: Int, sentAt: UInt64) {
        let hold = holds[groupOf[button]]
        let me = connection + 1
        guard hold.holder.load(ordering: .relaxed) == me else { return }
        hold.releasedButton.store(hold.button.load(ordering: .relaxed), ordering: .relaxed)
        hold.releasedFence.store(hold.fence.load(ordering: .relaxed), ordering: .relaxed)
        hold.releasedGrantAt.store(hold.grantAt.load(ordering: .relaxed), ordering: .relaxed)
        hold.releasedAt.store(sentAt, ordering: .relaxed)
        hold.releasedBy.store(me, ordering: .relaxed)
        // Release ordering: whoever takes the group next sees the fields above.
        hold.holder.store(0, ordering: .releasing)
    }

    /// The release was refused (`ERROR rate-limited`), so the grant never ended: the
    /// connection holds the group again. Anyone who took it meanwhile was granted while
    /// this grant was live.
    public func releaseRefused(button: Int, by connection: Int, readAt: UInt64, fence: Int64 = -1) {
        let hold = holds[groupOf[button]]
        let me = connection + 1
        let taken = hold.holder.compareExchange(expected: 0, desired: me, ordering: .acquiringAndReleasing)
        if !taken.exchanged, taken.original != me {
            let other = taken.original - 1
            return violate(
                .grantOverlap, "c\(other) read a grant of \(group(button)) while c\(connection)'s grant of it was live (its \(releaseWord) was refused)",
                [
                    "c\(other): \(grant(hold.button.load(ordering: .relaxed), hold.fence.load(ordering: .relaxed))) read at \(time(hold.grantAt.load(ordering: .relaxed)))",
                    "c\(connection): \(grant(button, fence)), \(releaseWord) refused, read at \(time(readAt))",
                ])
        }
        hold.button.store(button, ordering: .relaxed)
        hold.fence.store(fence, ordering: .relaxed)
    }

    func violate(_ rule: SafetyRule, _ message: String, _ evidence: [String]) {
        found.withLock { f in
            f.count += 1
            if f.kept.count < maxViolations { f.kept.append(Violation(rule: rule, message: message, evidence: evidence)) }
        }
    }

    private func group(_ button: Int) -> String {
        guard button >= 0 && button < labels.count else { return "a group" }
        let g = groupOf[button]
        return g < groupLabels.count ? groupLabels[g] : "the group of \(labels[button])"
    }

    private func grant(_ button: Int, _ fence: Int64) -> String {
        let name = button >= 0 && button < labels.count ? labels[button] : "?"
        return "\(grantWord) \(name)" + (fence >= 0 ? " fence=\(fence)" : "")
    }

    /// Seconds since `origin` to the nanosecond, so that equal stamps show as equal.
    func time(_ t: UInt64) -> String {
        let since = t >= origin ? t - origin : 0
        let fraction = String(since % LoadClock.second)
        return "\(since / LoadClock.second).\(String(repeating: "0", count: 9 - fraction.count))\(fraction) s"
    }
}
