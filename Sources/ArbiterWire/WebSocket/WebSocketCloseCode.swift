/// Close status codes (RFC 6455 7.4) used by the server, and the rule for which codes a
/// peer may put on the wire.
public enum WebSocketCloseCode {
    /// 1000: the purpose of the connection was fulfilled.
    public static let normal: UInt16 = 1000
    /// 1001: the server is shutting down or the page navigated away.
    public static let goingAway: UInt16 = 1001
    /// 1002: the peer broke the protocol.
    public static let protocolError: UInt16 = 1002
    /// 1003: a data type the endpoint does not accept (e.g. binary).
    public static let unsupportedData: UInt16 = 1003
    /// 1007: a text message or close reason that is not UTF-8.
    public static let invalidPayload: UInt16 = 1007
    /// 1008: a generic policy violation (e.g. the outbound buffer bound).
    public static let policyViolation: UInt16 = 1008
    /// 1009: a message too big to process.
    public static let messageTooBig: UInt16 = 1009
    /// 1011: an unexpected condition on the server.
    public static let internalError: UInt16 = 1011

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
