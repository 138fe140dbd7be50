/// A command's whole answer: the lines before its final one (a JOIN's `button` lines, a
/// HISTORY's `record` lines) and the final one.
struct Reply: Sendable {
    let lines: [ServerMessage]
    let final: ServerMessage

    var isError: Bool { final.type == "error" }
    var errorCode: String? { isError ? final.string("code") : nil }
    var message: String { final.string("message") ?? "" }
    /// The server's words for a command it cannot say was done or not (cluster mode).
    var mayHaveBeenDone: Bool { message.contains("may or may not have been done") }

    var serverError: ArbiterClientError {
        errorCode == "unavailable"
            ? .unavailable(message: message, mayHaveBeenDone: mayHaveBeenDone) : .server(code: errorCode ?? final.type, message: message)
    }
}
