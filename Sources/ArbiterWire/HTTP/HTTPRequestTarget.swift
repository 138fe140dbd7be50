/// The decoded parts of a request-target: its path and its query items.
///
/// Splitting and percent-decoding happen once, in the parser, so that routes compare plain
/// strings and never see `%2D` or `+`.
struct HTTPRequestTarget: Sendable {
    var path: String
    var queryItems: [(name: String, value: String)]
    /// The authority of an absolute-form target (`http://host:port/p`); nil for the others.
    var authority: String?

    /// Why a target was refused; becomes the `.badRequest` reason.
    enum Failure: Error {
        case invalid(String)
    }

    /// Parses origin-form (`/p?q`), absolute-form (`http://host/p?q`), asterisk-form (`*`)
    /// and authority-form (`host:port`, CONNECT only; its path is empty).
    static func parse(_ target: String, method: String) throws(Failure) -> HTTPRequestTarget {
        let bytes = Array(target.utf8)
        if bytes.first == UInt8(ascii: "/") {
            return try parseOrigin(bytes[...])
        }
        if target == "*" {
            return HTTPRequestTarget(path: "*", queryItems: [])
        }
        if method == "CONNECT" {
            return HTTPRequestTarget(path: "", queryItems: [])
        }
        let lowered = target.lowercased()
        for scheme in ["http://", "https://"] where lowered.hasPrefix(scheme) {
            let afterScheme = bytes.dropFirst(scheme.utf8.count)
            let end =
                afterScheme.firstIndex(where: {
                    $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#")
                }) ?? bytes.endIndex
            // The server answers for this authority, not for `Host` (RFC 9112 3.2.2), so it
            // is kept for the Host check; an http URI without a host is invalid (RFC 9110 4.2.1).
            let authority = String(decoding: afterScheme[..<end], as: UTF8.self)
            guard !authority.isEmpty else { throw .invalid("absolute-form request-target without a host") }
            var parsed: HTTPRequestTarget
            if end == bytes.endIndex {
                parsed = HTTPRequestTarget(path: "/", queryItems: [])
            } else if bytes[end] == UInt8(ascii: "/") {
                parsed = try parseOrigin(bytes[end...])
            } else {
                parsed = try parseOrigin([UInt8(ascii: "/")] + bytes[end...])
            }
            parsed.authority = authority
            return parsed
        }
        throw .invalid("invalid request-target")
    }

    /// Lenient variant for heads built in code: an unparseable target becomes the path.
    static func lenient(_ target: String, method: String) -> HTTPRequestTarget {
        (try? parse(target, method: method)) ?? HTTPRequestTarget(path: target, queryItems: [])
    }

    private static func parseOrigin(_ bytes: ArraySlice<UInt8>) throws(Failure) -> HTTPRequestTarget {
        if bytes.contains(UInt8(ascii: "#")) { throw .invalid("fragment in request-target") }
        let question = bytes.firstIndex(of: UInt8(ascii: "?")) ?? bytes.endIndex
        let path = try decode(bytes[..<question], plusIsSpace: false)
        var items: [(name: String, value: String)] = []
        if question < bytes.endIndex {
            let query = bytes[(question + 1)...]
            for pair in query.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
                let equals = pair.firstIndex(of: UInt8(ascii: "=")) ?? pair.endIndex
                let name = try decode(pair[..<equals], plusIsSpace: true)
                let value =
                    equals < pair.endIndex
                    ? try decode(pair[(equals + 1)...], plusIsSpace: true) : ""
                items.append((name: name, value: value))
            }
        }
        return HTTPRequestTarget(path: path, queryItems: items)
    }

    /// Percent-decodes to UTF-8. `+` means space only in the query, where HTML forms and
    /// `URLSearchParams` put it; in a path it is a literal plus.
    private static func decode(_ bytes: ArraySlice<UInt8>, plusIsSpace: Bool) throws(Failure) -> String {
        guard bytes.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) else {
            return String(decoding: bytes, as: UTF8.self)
        }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.endIndex,
                    let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2])
                else { throw .invalid("invalid percent-encoding") }
                out.append(high << 4 | low)
                index += 3
                continue
            }
            out.append(plusIsSpace && byte == UInt8(ascii: "+") ? HTTPSyntax.space : byte)
            index += 1
        }
        guard let text = String(validating: out, as: UTF8.self) else {
            throw .invalid("percent-encoding is not UTF-8")
        }
        return text
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
