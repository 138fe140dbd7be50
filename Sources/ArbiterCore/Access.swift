/// What a session may do on a panel. Ordered: each level includes the ones below.
public enum Access: Int, Comparable, Sendable {
    case none = 0
    /// JOIN and HISTORY.
    case view = 1
    /// DOWN, UP and CANCEL.
    case press = 2
    /// RESET and KICK.
    case admin = 3

    public static func < (lhs: Access, rhs: Access) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The role name shown in `OK HELLO ... role=`.
    public var roleName: String {
        switch self {
        case .none, .view: "viewer"
        case .press: "presser"
        case .admin: "admin"
        }
    }
}
