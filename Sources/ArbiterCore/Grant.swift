/// One live ownership of a group: who, which button, and the kind's clock (which knows
/// when the grant began where the kind needs it).
struct Grant: Sendable, Equatable {
    enum Phase: Sendable, Equatable {
        /// A tap fired at the grant; it only waits for release or its timeout.
        case tap(timeoutAt: Instant?)
        case hold(HoldClock)
        case talk(TalkClock)
    }

    var owner: Owner
    var button: Int
    var phase: Phase

    var deadline: Instant? {
        switch phase {
        case .tap(let timeoutAt): timeoutAt
        case .hold(let clock): clock.nextDeadline
        case .talk(let clock): clock.nextDeadline
        }
    }
}
