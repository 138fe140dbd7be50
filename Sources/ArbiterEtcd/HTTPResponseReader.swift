/// Reads one HTTP/1.1 response incrementally: the head, then the body by Content-Length,
/// chunked transfer coding, or until the connection closes. Streamed gateway responses
/// (keepalive, watch) are chunked, so body bytes are handed out as they arrive.
struct HTTPResponseReader {
    enum Failure: Error, Equatable {
        case malformed(String)
    }

    private enum Body {
        case length(Int)
        case chunkSize
        case chunkData(Int)
        case chunkEnd
        case trailer
        case untilClose
        case done
    }

    private(set) var status: Int?
    private(set) var headers: [(String, String)] = []
    private var buffer: [UInt8] = []
    private var body: Body?
    private let maxHead = 16_384

    var isComplete: Bool {
        if case .done = body { return true }
        return false
    }

    /// Feeds received bytes (empty: the peer closed) and returns the body bytes they completed.
    mutating func feed(_ bytes: [UInt8]) throws(Failure) -> [UInt8] {
        if bytes.isEmpty {
            switch body {
            case .untilClose: body = .done; return []
            case .done: return []
            case nil, .length, .chunkSize, .chunkData, .chunkEnd, .trailer:
                throw .malformed("the connection closed in the middle of the response")
            }
        }
        buffer.append(contentsOf: bytes)
        if body == nil { try readHead() }
        guard body != nil else { return [] }
        return try readBody()
    }

    func header(_ name: String) -> String? {
        let lower = name.lowercased()
        return headers.first { $0.0.lowercased() == lower }?.1
    }

    private mutating func readHead() throws(Failure) {
        guard let end = find([13, 10, 13, 10], from: 0) else {
            if buffer.count > maxHead { throw .malformed("response head too long") }
            return
        }
        let text = String(decoding: buffer[0..<end], as: UTF8.self)
        buffer.removeFirst(end + 4)
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: false).makeIterator()
        guard let statusLine = lines.next() else { throw .malformed("no status line") }
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let code = Int(parts[1]) else {
            throw .malformed("bad status line \"\(statusLine.prefix(80))\"")
        }
        status = code
        while let line = lines.next() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingSpaces))
        }
        if header("Transfer-Encoding")?.lowercased().contains("chunked") == true {
            body = .chunkSize
        } else if let length = header("Content-Length") {
            guard let n = Int(length), n >= 0 else { throw .malformed("bad Content-Length") }
            body = n == 0 ? .done : .length(n)
        } else {
            body = .untilClose
        }
    }

    private mutating func readBody() throws(Failure) -> [UInt8] {
        var out: [UInt8] = []
        while true {
            switch body {
            case nil, .done:
                return out
            case .untilClose:
                out += buffer
                buffer = []
                return out
            case .length(let n):
                let take = min(n, buffer.count)
                out += buffer[0..<take]
                buffer.removeFirst(take)
                body = n == take ? .done : .length(n - take)
                return out
            case .chunkSize:
                guard let end = find([13, 10], from: 0) else {
                    if buffer.count > 1024 { throw .malformed("chunk size line too long") }
                    return out
                }
                let line = String(decoding: buffer[0..<end], as: UTF8.self)
                buffer.removeFirst(end + 2)
                let sizeText = line.split(separator: ";").first.map(String.init) ?? ""
                guard let size = Int(sizeText.trimmingSpaces, radix: 16), size >= 0 else { throw .malformed("bad chunk size") }
                body = size == 0 ? .trailer : .chunkData(size)
            case .chunkData(let n):
                guard !buffer.isEmpty else { return out }
                let take = min(n, buffer.count)
                out += buffer[0..<take]
                buffer.removeFirst(take)
                body = n == take ? .chunkEnd : .chunkData(n - take)
            case .chunkEnd:
                guard buffer.count >= 2 else { return out }
                guard buffer[0] == 13, buffer[1] == 10 else { throw .malformed("chunk not followed by CRLF") }
                buffer.removeFirst(2)
                body = .chunkSize
            case .trailer:
                guard let end = find([13, 10], from: 0) else { return out }
                buffer.removeFirst(end + 2)
                if end == 0 { body = .done }
            }
        }
    }

    private func find(_ needle: [UInt8], from start: Int) -> Int? {
        guard buffer.count >= needle.count + start else { return nil }
        var i = start
        while i + needle.count <= buffer.count {
            if buffer[i] == needle[0], Array(buffer[i..<(i + needle.count)]) == needle { return i }
            i += 1
        }
        return nil
    }
}
