/// A session's last grant of a button that ended without its own release (fired,
/// timeout, reset): a finger lifted after it gets `OK UP ... ended=` once.
struct EndedGrant: Sendable, Equatable {
    var fence: UInt64
    var reason: ReleaseReason
}
