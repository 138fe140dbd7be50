/// A DOWN, UP or CANCEL: the one shape of a press from the bytes to the core.
///
/// `Name` is how the panel and the button are named at each step: the fast parser's
/// byte ranges of the line (`Press<UnsafeBufferPointer<UInt8>>`), a decoded command's
/// ids (`Press<String>`, in `Request.press`), and the indexes the server looked them up
/// to (`Press<Int>`), which is what the server carries and the core decides.
public struct Press<Name> {
    /// Always `.down`, `.up` or `.cancel` (the initializer refuses the others).
    public let verb: Verb
    public var panel: Name
    public var button: Name
    /// UP and CANCEL only: the grant the release is about.
    public var fence: UInt64?

    /// Nil unless `verb` is a press verb and a fence goes with UP or CANCEL only.
    @inlinable
    public init?(verb: Verb, panel: Name, button: Name, fence: UInt64? = nil) {
        guard verb.isPress, fence == nil || verb != .down else { return nil }
        self.verb = verb
        self.panel = panel
        self.button = button
        self.fence = fence
    }

    @usableFromInline
    init(checked verb: Verb, panel: Name, button: Name, fence: UInt64?) {
        self.verb = verb
        self.panel = panel
        self.button = button
        self.fence = fence
    }

    @inlinable
    public static func down(panel: Name, button: Name) -> Press {
        Press(checked: .down, panel: panel, button: button, fence: nil)
    }

    @inlinable
    public static func up(panel: Name, button: Name, fence: UInt64? = nil) -> Press {
        Press(checked: .up, panel: panel, button: button, fence: fence)
    }

    @inlinable
    public static func cancel(panel: Name, button: Name, fence: UInt64? = nil) -> Press {
        Press(checked: .cancel, panel: panel, button: button, fence: fence)
    }

    /// The same press with its panel and button named another way (decoded).
    @inlinable
    public func map<Other>(_ transform: (Name) -> Other) -> Press<Other> {
        Press<Other>(checked: verb, panel: transform(panel), button: transform(button), fence: fence)
    }

    /// The same press with its panel and button looked up.
    @inlinable
    public func resolved<Other>(panel: Other, button: Other) -> Press<Other> {
        Press<Other>(checked: verb, panel: panel, button: button, fence: fence)
    }
}

extension Press: Sendable where Name: Sendable {}
extension Press: Equatable where Name: Equatable {}
