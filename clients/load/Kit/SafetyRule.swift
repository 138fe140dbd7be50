/// The safety properties the checker holds a run's observed history to.
public enum SafetyRule: String, Sendable, CaseIterable {
    /// Never two owners of one group at once (in the panel's total order).
    case twoOwners = "two-owners"
    /// Fences strictly increase per panel (PRESSED after PRESSED, and above the
    /// fence of the JOIN snapshot).
    case fenceOrder = "fence-order"
    /// Every member's `seq` is gapless: after `OK JOIN ... seq=S` come S+1, S+2, ...
    /// and a later JOIN's snapshot seq equals the last event seen (in cluster mode it may
    /// be past it, when the member's node resynchronised it meanwhile; never before it).
    case seqGap = "seq-gap"
    /// Every member sees the same event at the same seq (one order for all).
    case seqDisagree = "seq-disagree"
    /// Cluster mode: after `RELEASED reason=failover` a member reads the new term's
    /// snapshot before any other event, and every fence of a later term is above every
    /// fence of an earlier one, in whatever order members read them.
    case failover = "failover"
    /// Every PRESSED is closed by exactly one RELEASED (and RELEASED only closes an
    /// open PRESSED of the same button and fence).
    case pressRelease = "press-release"
    /// Exactly one FIRED per completed hold (reason=fired), none for a hold released
    /// early or for a talk button, exactly one per tap grant.
    case firedCount = "fired-count"
    /// In the owner's own stream, a STOPPED reason=up never precedes its OK UP reply.
    case stoppedBeforeUp = "stopped-before-up"
    /// Every GRANTED a connection reads is the PRESSED the members see: same fence,
    /// same button, that connection's session (a grant nobody was told about, or told
    /// to the wrong client, would be a second owner the events do not show).
    case grantMismatch = "grant-mismatch"
    /// In the owner's own stream, a reply precedes the events its command causes:
    /// GRANTED before its PRESSED, OK UP/CANCEL before RELEASED reason=up/cancel.
    case replyOrder = "reply-order"
    /// Observer-free (contend, `OverlapChecker`): no connection reads a grant of a group
    /// while another's grant of it was read and its release (UP, DEL) not yet sent, and
    /// each grant is read strictly after the previous holder's release was sent.
    case grantOverlap = "grant-overlap"
    /// Observer-free (contend, arbiter): a grant's fence is above its group's previous
    /// grant's, and above every fence of the panel read before its DOWN was sent.
    case grantFence = "grant-fence"
    /// Queue groups: QUEUED and DEQUEUED positions agree with the line, and when the
    /// owner lets go the first in line is granted at once (the next event).
    case queueOrder = "queue-order"
    /// Queue groups: every queued press is granted or leaves the line (DEQUEUED).
    case queueLeft = "queue-left"
    /// Buzzer groups: one winner per round, and no DOWN accepted while closed.
    case buzzerRound = "buzzer-round"
    /// Buzzer groups: ranks 2, 3, ... in order, `after_us` never going down, one place
    /// per session and round, in the events and in the players' RANKED replies alike.
    case buzzerRank = "buzzer-rank"
    /// Buzzer groups: members are told (BUZZED) the places 2 to the group's `announce`
    /// and no later one; a player answered RANKED within `announce` is told to them.
    case buzzerAnnounce = "buzzer-announce"
}
