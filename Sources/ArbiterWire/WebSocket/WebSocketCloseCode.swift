/// The rule for which close status codes (RFC 6455 7.4) a peer may put on the wire. The
/// codes the server sends for a failed connection come from `WebSocketError.closeCode`;
/// the two it sends for a connection that ends well are here.
public enum WebSocketCloseCode {
    /// The session ended as asked (QUIT).
    public static let normal: UInt16 = 1000
    /// The server is shutting down.
    public static let goingAway: UInt16 = 1001

    /// Whether a peer may send `code` in a close frame: 1000-1003, 1007-1011 and the
    /// application/private range 3000-4999. 1005, 1006 and 1015 are reserved for reporting
    /// and never sent; 1004 and 0-999 are unassigned; 1012-2999 are refused as well (the
    /// server accepts only the codes its peers were specified to use).
    public static func isValidOnWire(_ code: UInt16) -> Bool {
        switch code {
        case 1000...1003, 1007...1011, 3000...4999: return true
        default: return false
        }
    }
}
