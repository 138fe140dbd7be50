import Synchronization

/// The highest fence of one panel that any connection of the generator has read in a
/// GRANTED reply. A DOWN sent after it was read can only be decided by the server after
/// that grant, so its own fence must be higher (PROTOCOL.md section 4: fences strictly
/// increase per panel).
final class FenceMark: Sendable {
    let highest = Atomic<Int64>(-1)

    init() {}
}
