/// A hook's signing key as its `secret_file` holds it: `whsec_` and the key bytes in
/// base64, the form Standard Webhooks' libraries take, so a receiver pastes the same text.
public enum HookSecret {
    /// A shorter key can be searched offline by anyone who sees one signed request.
    public static let minimumBytes = 16

    /// The key bytes of the file's content, or why it is refused. One trailing newline
    /// (as `echo` leaves) is allowed, nothing else around the text.
    public static func parse(_ content: [UInt8]) -> Result<[UInt8], HookSecretFailure> {
        var bytes = content[...]
        if bytes.last == UInt8(ascii: "\n") { bytes = bytes.dropLast() }
        guard let text = String(validating: bytes, as: UTF8.self), text.hasPrefix("whsec_") else {
            return .failure(HookSecretFailure(reason: "must hold whsec_ and the key in base64 (one line)"))
        }
        guard let key = Base64.decode(String(text.dropFirst(6))), !key.isEmpty else {
            return .failure(HookSecretFailure(reason: "holds whsec_ followed by something that is not base64"))
        }
        guard key.count >= minimumBytes else {
            return .failure(HookSecretFailure(reason: "holds a key of \(key.count) bytes; use at least \(minimumBytes)"))
        }
        return .success(key)
    }
}

/// Why a hook's secret file is refused.
public struct HookSecretFailure: Error, Equatable {
    public var reason: String

    public init(reason: String) {
        self.reason = reason
    }
}
