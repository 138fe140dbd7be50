/// A command line that cannot be run, said in one line the user can act on.
public struct UsageError: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String
    public var description: String { message }

    public init(message: String) {
        self.message = message
    }
}
