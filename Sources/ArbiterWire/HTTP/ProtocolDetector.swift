/// Decides from the first bytes of a TCP connection whether the peer speaks HTTP/1.x or
/// the line protocol.
///
/// The server buffers a connection's first bytes, asks ``classify(_:)`` after every read
/// and replays the buffered bytes into the chosen codec ("detect, then replay"). The
/// decision is made as early as possible: a line peer must get its `WELCOME` the moment
/// its first line can no longer be a request line, and must never wait for a full line
/// that looks nothing like HTTP.
public enum ProtocolDetector {
    /// The outcome of looking at a connection's first bytes.
    public enum Detection: Sendable, Equatable {
        /// The first line is a complete HTTP/1.x request line.
        case http
        /// The first bytes can no longer become an HTTP/1.x request line.
        case line
        /// Every byte so far is consistent with a request line; read more.
        case needMoreBytes
    }

    /// The longest first line that is still awaited. Beyond it the peer is treated as a
    /// line peer, so a slow stream of target bytes cannot hold the decision open forever.
    public static let maxRequestLineBytes = 8192

    /// Classifies a connection from the bytes received so far (all of them, from the first).
    ///
    /// HTTP iff the first line is `METHOD SP request-target SP HTTP/1.x` followed by `\r\n`
    /// or `\n`, where METHOD is one or more RFC 9110 `tchar`s other than lowercase
    /// letters and the request-target is one or more visible ASCII characters.
    public static func classify(_ prefix: some Collection<UInt8>) -> Detection {
        var phase = Phase.method(length: 0)
        var consumed = 0
        for byte in prefix {
            consumed += 1
            if consumed > maxRequestLineBytes { return .line }
            switch phase.advance(with: byte) {
            case .continue(let next): phase = next
            case .decided(let detection): return detection
            }
        }
        return .needMoreBytes
    }

    /// Where in the request line the scan is. Kept as data so that `classify` is a single
    /// pass with early exit at the first impossible byte.
    private enum Phase {
        case method(length: Int)
        case target(length: Int)
        /// Matching the literal `HTTP/1.`; `matched` counts bytes of it already seen.
        case version(matched: Int)
        case minorDigit
        case lineEnd
        case lineFeed

        enum Step {
            case `continue`(Phase)
            case decided(Detection)
        }

        private static let versionPrefix = Array("HTTP/1.".utf8)

        func advance(with byte: UInt8) -> Step {
            switch self {
            case .method(let length):
                if byte == HTTPSyntax.space, length > 0 { return .continue(.target(length: 0)) }
                return HTTPSyntax.isUppercaseMethodChar(byte)
                    ? .continue(.method(length: length + 1)) : .decided(.line)
            case .target(let length):
                if byte == HTTPSyntax.space, length > 0 { return .continue(.version(matched: 0)) }
                return HTTPSyntax.isTargetChar(byte)
                    ? .continue(.target(length: length + 1)) : .decided(.line)
            case .version(let matched):
                guard byte == Self.versionPrefix[matched] else { return .decided(.line) }
                return matched + 1 == Self.versionPrefix.count
                    ? .continue(.minorDigit) : .continue(.version(matched: matched + 1))
            case .minorDigit:
                return (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    ? .continue(.lineEnd) : .decided(.line)
            case .lineEnd:
                if byte == HTTPSyntax.lf { return .decided(.http) }
                return byte == HTTPSyntax.cr ? .continue(.lineFeed) : .decided(.line)
            case .lineFeed:
                return byte == HTTPSyntax.lf ? .decided(.http) : .decided(.line)
            }
        }
    }
}
