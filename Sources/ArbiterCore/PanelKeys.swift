/// The optional secrets of one panel (PROTOCOL.md section 8).
///
/// A key of a higher level also grants the lower ones. A level without a key is open
/// unless a level below it has one: then it takes the nearest lower key. So a panel with
/// only a `press` key is open to view, and only the press key may press, RESET or KICK;
/// with only a `view` key, the view key does everything and nobody else anything. (Read
/// literally, "a level without a key is open" would let anyone RESET a press-keyed panel,
/// and an open admin level would grant the lower ones: the keys would gate nothing.)
public struct PanelKeys: Sendable, Equatable {
    public var view: String?
    public var press: String?
    public var admin: String?

    public init(view: String? = nil, press: String? = nil, admin: String? = nil) {
        self.view = view
        self.press = press
        self.admin = admin
    }

    /// The level a session holding `key` (or no key) has on this panel.
    ///
    /// Every configured key is compared, whatever matched first, so the time taken
    /// says nothing about which key (or how much of it) was right.
    public func access(forKey key: String?) -> Access {
        let presented = key.map { Array($0.utf8) }
        // The key each level asks for: its own, or the nearest lower one.
        let asked = [view, press ?? view, admin ?? press ?? view]
        let matched = asked.map { Self.matches($0, presented) }
        var granted = Access.none
        for (i, level) in [Access.view, .press, .admin].enumerated() {
            // Open, or the key of this level or of a higher one.
            guard asked[i] == nil || matched[i...].contains(true) else { break }
            granted = level
        }
        return granted
    }

    /// Whether `key` is one of this panel's keys.
    public func recognizes(_ key: String) -> Bool {
        let presented = Array(key.utf8)
        let a = Self.matches(admin, presented)
        let p = Self.matches(press, presented)
        let v = Self.matches(view, presented)
        return a || p || v
    }

    private static func matches(_ secret: String?, _ presented: [UInt8]?) -> Bool {
        guard let secret, let presented else { return false }
        return ConstantTime.equals(Array(secret.utf8), presented)
    }
}
