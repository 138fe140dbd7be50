/// A button's `state=` in a JOIN snapshot.
public enum ButtonState: UInt8, Sendable, Equatable {
    case unknown, idle, pressed, locked
}
