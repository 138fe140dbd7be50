/// The optional secrets of one panel (PROTOCOL.md section 8).
///
/// A level without a key is open; a key of a higher level also grants the lower ones.
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
        let isAdmin = Self.matches(admin, presented)
        let isPresser = Self.matches(press, presented)
        let isViewer = Self.matches(view, presented)
        if admin == nil || isAdmin { return .admin }
        if press == nil || isPresser { return .press }
        if view == nil || isViewer { return .view }
        return .none
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
