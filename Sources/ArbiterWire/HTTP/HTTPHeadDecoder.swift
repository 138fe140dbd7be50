/// Turns the bytes of one complete request head into an ``HTTPRequestHead``, enforcing the
/// RFC 9112 rules whose violation lets two parsers disagree about where a request ends.
enum HTTPHeadDecoder {
    /// Decodes `bytes`, which run from the first byte of the head through the LF that ends
    /// its empty line. Leading empty lines (RFC 9112 2.2 says to ignore them) are allowed.
    static func decode(_ bytes: ArraySlice<UInt8>, maxHeaders: Int) throws(HTTPParseError) -> HTTPRequestHead {
        var lines = try splitLines(bytes)
        while let first = lines.first, first.isEmpty { lines.removeFirst() }
        guard let requestLine = lines.first else { throw .badRequest("missing request line") }
        let (method, target, major, minor) = try parseRequestLine(requestLine)

        var headers: [(name: String, value: String)] = []
        for line in lines.dropFirst() {
            if line.isEmpty { break }
            guard headers.count < maxHeaders else { throw .tooManyHeaders }
            headers.append(try parseField(line))
        }

        let parsedTarget: HTTPRequestTarget
        do {
            parsedTarget = try HTTPRequestTarget.parse(target, method: method)
        } catch {
            switch error {
            case .invalid(let reason): throw .badRequest(reason)
            }
        }
        let head = HTTPRequestHead(
            method: method, target: target, parsedTarget: parsedTarget,
            versionMajor: major, versionMinor: minor, headers: headers)
        try validateFraming(head)
        return head
    }

    /// Splits on LF and drops one CR before it. A CR anywhere else is refused: some
    /// intermediaries treat a bare CR as a line break and others do not.
    private static func splitLines(_ bytes: ArraySlice<UInt8>) throws(HTTPParseError) -> [ArraySlice<UInt8>] {
        var lines: [ArraySlice<UInt8>] = []
        var start = bytes.startIndex
        for index in bytes.indices where bytes[index] == HTTPSyntax.lf {
            var end = index
            if end > start, bytes[end - 1] == HTTPSyntax.cr { end -= 1 }
            let line = bytes[start..<end]
            if line.contains(HTTPSyntax.cr) { throw .badRequest("bare CR in head") }
            lines.append(line)
            start = index + 1
        }
        return lines
    }

    private static func parseRequestLine(
        _ line: ArraySlice<UInt8>
    ) throws(HTTPParseError) -> (String, String, Int, Int) {
        let parts = line.split(separator: HTTPSyntax.space, maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .badRequest("malformed request line") }
        let (method, target, version) = (parts[0], parts[1], parts[2])
        guard !method.isEmpty, method.allSatisfy(HTTPSyntax.isTokenChar) else {
            throw .badRequest("invalid method")
        }
        guard !target.isEmpty, target.allSatisfy(HTTPSyntax.isTargetChar) else {
            throw .badRequest("invalid request-target")
        }
        let digits = UInt8(ascii: "0")...UInt8(ascii: "9")
        let v = Array(version)
        guard v.count == 8, v[0..<5].elementsEqual("HTTP/".utf8), v[6] == UInt8(ascii: "."),
            digits.contains(v[5]), digits.contains(v[7])
        else { throw .badRequest("malformed HTTP version") }
        let major = Int(v[5] - UInt8(ascii: "0"))
        let minor = Int(v[7] - UInt8(ascii: "0"))
        guard major == 1 else { throw .unsupportedVersion }
        return (
            String(decoding: method, as: UTF8.self), String(decoding: target, as: UTF8.self),
            major, minor
        )
    }

    private static func parseField(_ line: ArraySlice<UInt8>) throws(HTTPParseError) -> (name: String, value: String) {
        if line.first == HTTPSyntax.space || line.first == HTTPSyntax.tab {
            // obs-fold (RFC 9112 5.2): refused rather than unfolded, as a server may.
            throw .badRequest("obsolete line folding")
        }
        guard let colon = line.firstIndex(of: HTTPSyntax.colon) else {
            throw .badRequest("header line without colon")
        }
        let name = line[..<colon]
        // Also refuses whitespace before the colon (RFC 9112 5.1), a classic smuggling vector.
        guard !name.isEmpty, name.allSatisfy(HTTPSyntax.isTokenChar) else {
            throw .badRequest("invalid header name")
        }
        var value = line[(colon + 1)...]
        while let first = value.first, first == HTTPSyntax.space || first == HTTPSyntax.tab {
            value.removeFirst()
        }
        while let last = value.last, last == HTTPSyntax.space || last == HTTPSyntax.tab {
            value.removeLast()
        }
        guard value.allSatisfy(HTTPSyntax.isFieldValueChar) else {
            throw .badRequest("control character in header value")
        }
        return (String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self))
    }

    /// Refuses every head whose body length two parsers could read differently
    /// (request smuggling, RFC 9112 6.3 and 11.2).
    private static func validateFraming(_ head: HTTPRequestHead) throws(HTTPParseError) {
        let lengths = head.headers(named: "Content-Length")
        let transferEncodings = head.headers(named: "Transfer-Encoding")
        if !lengths.isEmpty && !transferEncodings.isEmpty {
            throw .badRequest("both Content-Length and Transfer-Encoding")
        }
        if !lengths.isEmpty {
            var declared: Int?
            for element in lengths.flatMap({ $0.split(separator: ",", omittingEmptySubsequences: false) }) {
                let text = HTTPSyntax.trimmed(element)
                guard !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
                    let value = Int(text)
                else { throw .badRequest("invalid Content-Length") }
                if let earlier = declared, earlier != value {
                    throw .badRequest("conflicting Content-Length values")
                }
                declared = value
            }
        }
        if !transferEncodings.isEmpty {
            if head.versionMinor == 0 { throw .badRequest("Transfer-Encoding in HTTP/1.0") }
            let codings = head.headerTokens("Transfer-Encoding")
            guard codings.last == "chunked", codings.filter({ $0 == "chunked" }).count == 1 else {
                throw .badRequest("Transfer-Encoding must end with a single chunked")
            }
        }
        if head.headers(named: "Host").count > 1 {
            throw .badRequest("more than one Host header")
        }
    }
}
