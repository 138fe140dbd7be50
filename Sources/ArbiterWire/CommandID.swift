import ArbiterCore

/// A JSON command's optional `"id"`, echoed verbatim in its reply.
public enum CommandID: Sendable, Equatable {
    case string(String)
    /// The number's JSON text as sent, so `7`, `7.0` and `1e3` come back unchanged.
    case number(String)
}

/// A decoded command with what its reply needs: the form to answer in and the id.
public struct ParsedCommand: Sendable, Equatable {
    public var request: Request
    /// The form the reply is written in: the command's own form.
    public var format: WireFormat
    public var id: CommandID?

    public init(request: Request, format: WireFormat, id: CommandID? = nil) {
        self.request = request
        self.format = format
        self.id = id
    }
}

/// A command that could not be decoded: the `ERROR` line it gets.
public struct RequestError: Error, Sendable, Equatable {
    public var code: ErrorCode
    public var message: String
    public var format: WireFormat
    public var id: CommandID?

    public init(_ code: ErrorCode, _ message: String, format: WireFormat = .text, id: CommandID? = nil) {
        self.code = code
        self.message = message
        self.format = format
        self.id = id
    }
}
