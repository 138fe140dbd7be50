/// What one attempt came to.
public enum HookOutcome: Sendable, Equatable {
    /// The receiver answered with this status.
    case status(Int)
    /// No answer: refused, timed out, reset, unresolvable, not HTTP.
    case failed(String)

    public enum Verdict: Sendable, Equatable {
        case delivered, retry, reject
    }

    /// Any 2xx is delivered. Whatever may pass (no answer, 408, 429, 5xx) is retried;
    /// any other status says the request itself is wrong, and sending it again will not
    /// change that.
    public var verdict: Verdict {
        switch self {
        case .failed: .retry
        case .status(let code):
            switch code {
            case 200...299: .delivered
            case 408, 429, 500...599: .retry
            default: .reject
            }
        }
    }

    public var reason: String {
        switch self {
        case .status(let code): "status \(code)"
        case .failed(let why): why
        }
    }
}
