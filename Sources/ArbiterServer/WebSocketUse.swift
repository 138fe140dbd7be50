/// What a WebSocket's messages are for.
enum WebSocketUse: Sendable, Equatable {
    /// JSON commands (`/ws`).
    case commands
    /// Every message sent back as it came (`/ws?echo=1`, for conformance suites).
    case echo
}
