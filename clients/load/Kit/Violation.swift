/// One broken safety rule, with the observed messages that show it.
public struct Violation: Sendable, CustomStringConvertible {
    public var rule: SafetyRule
    public var message: String
    /// The offending messages, each prefixed by the stream (connection) that saw it.
    public var evidence: [String]

    public init(rule: SafetyRule, message: String, evidence: [String]) {
        self.rule = rule
        self.message = message
        self.evidence = evidence
    }

    public var description: String {
        (["VIOLATION \(rule.rawValue): \(message)"] + evidence.map { "    \($0)" }).joined(separator: "\n")
    }
}
