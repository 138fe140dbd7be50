/// Serializes HTTP/1.1 responses.
///
/// The framing headers (`Content-Length`, `Connection`) are always written here, from the
/// body and the keep-alive decision, so a route cannot produce a response whose length
/// disagrees with its body.
public enum HTTPResponse {
    /// Returns the complete response bytes.
    ///
    /// - Parameters:
    ///   - status: the status code, e.g. 200.
    ///   - reason: the reason phrase; nil takes it from ``reasonPhrase(for:)``.
    ///   - headers: extra header fields in order (e.g. `Content-Type`, `Allow` for 405).
    ///     `Content-Length` and `Connection` given here are ignored, except `Connection` on
    ///     a 1xx response (`Connection: Upgrade` on 101). CR, LF and NUL in names
    ///     or values become spaces: a value echoing user input must not start a new header.
    ///   - body: the body bytes.
    ///   - keepAlive: writes `Connection: keep-alive` or `Connection: close` (not on 1xx).
    ///   - headOnly: for `HEAD`: the `Content-Length` of `body` but not the body itself.
    public static func serialize(
        status: Int,
        reason: String? = nil,
        headers: [(String, String)],
        body: [UInt8],
        keepAlive: Bool,
        headOnly: Bool = false
    ) -> [UInt8] {
        let informational = (100...199).contains(status)
        var out: [UInt8] = []
        out.reserveCapacity(128 + headers.count * 32 + (headOnly ? 0 : body.count))
        out.append(contentsOf: "HTTP/1.1 \(status) ".utf8)
        appendSanitized(reason ?? reasonPhrase(for: status), to: &out)
        out.append(contentsOf: "\r\n".utf8)
        for (name, value) in headers {
            let lowered = name.lowercased()
            if lowered == "content-length" || (lowered == "connection" && !informational) { continue }
            appendSanitized(name, to: &out)
            out.append(contentsOf: ": ".utf8)
            appendSanitized(value, to: &out)
            out.append(contentsOf: "\r\n".utf8)
        }
        // RFC 9110 8.6: no Content-Length on 1xx and 204; on 304 it would describe a body
        // that is not sent, which old clients misread, so it is left out there too.
        let mayHaveBody = !informational && status != 204 && status != 304
        if mayHaveBody {
            out.append(contentsOf: "Content-Length: \(body.count)\r\n".utf8)
        }
        if !informational {
            out.append(contentsOf: (keepAlive ? "Connection: keep-alive\r\n" : "Connection: close\r\n").utf8)
        }
        out.append(contentsOf: "\r\n".utf8)
        if mayHaveBody && !headOnly {
            out.append(contentsOf: body)
        }
        return out
    }

    /// The standard reason phrase of a status code, or `"Unknown"`.
    public static func reasonPhrase(for status: Int) -> String {
        switch status {
        case 101: return "Switching Protocols"
        case 200: return "OK"
        case 204: return "No Content"
        case 301: return "Moved Permanently"
        case 304: return "Not Modified"
        case 400: return "Bad Request"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 408: return "Request Timeout"
        case 421: return "Misdirected Request"
        case 426: return "Upgrade Required"
        case 429: return "Too Many Requests"
        case 431: return "Request Header Fields Too Large"
        case 500: return "Internal Server Error"
        case 501: return "Not Implemented"
        case 503: return "Service Unavailable"
        case 505: return "HTTP Version Not Supported"
        default: return "Unknown"
        }
    }

    private static func appendSanitized(_ text: String, to out: inout [UInt8]) {
        for byte in text.utf8 {
            out.append(byte == 0x0D || byte == 0x0A || byte == 0x00 ? 0x20 : byte)
        }
    }
}
