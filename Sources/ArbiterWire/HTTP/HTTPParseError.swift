/// Why a request head was refused. The server answers with ``status`` and closes: after a
/// parse error the byte stream can no longer be trusted to contain request boundaries.
public enum HTTPParseError: Error, Sendable, Equatable {
    /// The head (request line, headers and the empty line) exceeds `maxHeadBytes`.
    case headTooLarge
    /// More header fields than `maxHeaders`.
    case tooManyHeaders
    /// The head is malformed or its framing is ambiguous; the reason is for logs only.
    case badRequest(String)
    /// A well-formed request line with an HTTP version other than 1.x.
    case unsupportedVersion

    /// The one place where parse errors become status codes.
    public var status: Int {
        switch self {
        case .headTooLarge, .tooManyHeaders: return 431
        case .badRequest: return 400
        case .unsupportedVersion: return 505
        }
    }
}

extension HTTPParseError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .headTooLarge: return "request head too large"
        case .tooManyHeaders: return "too many header fields"
        case .badRequest(let reason): return "bad request: \(reason)"
        case .unsupportedVersion: return "unsupported HTTP version"
        }
    }
}
