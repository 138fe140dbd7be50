/// An incremental HTTP/1.x request-head parser for one connection.
///
/// Feed it whatever the socket produced with ``append(_:)``, then call ``next()`` until it
/// returns nil: one read may hold several pipelined requests, or a fraction of one. Bytes
/// after a head stay buffered for the next request. A `Content-Length` body is skipped
/// (routes take no bodies), so keep-alive framing stays right; after a chunked head the rest
/// of the input is discarded and the server should answer with `keepAlive: false`.
///
/// Memory is proportional to the bytes of the unfinished head only; the buffer is released
/// whenever it drains, which matters with thousands of idle keep-alive connections.
public struct HTTPRequestParser: Sendable {
    /// The largest accepted head, request line to empty line inclusive (431 beyond).
    public let maxHeadBytes: Int
    /// The largest accepted number of header fields (431 beyond).
    public let maxHeaders: Int

    private var buffer: [UInt8] = []
    /// Everything before this index has been searched for the head's end already, so a head
    /// arriving one byte at a time is still scanned once in total.
    private var scanIndex = 0
    private var lineStart = 0
    private var sawRequestLine = false
    private var bodyBytesToSkip = 0
    private var state = State.readingHead

    private enum State: Sendable {
        case readingHead
        /// A chunked body follows and its end is never searched for.
        case discardingInput
        /// Sticky: once framing is lost, no later byte can be trusted to start a request.
        case failed(HTTPParseError)
    }

    /// Creates a parser with the given limits (defaults: 8 KiB head, 100 header fields).
    public init(maxHeadBytes: Int = 8192, maxHeaders: Int = 100) {
        self.maxHeadBytes = maxHeadBytes
        self.maxHeaders = maxHeaders
    }

    /// The number of bytes received but not yet consumed as a head.
    public var bufferedByteCount: Int { buffer.count }

    /// Whether the parser stopped looking for requests (after a chunked head or an error).
    public var isStopped: Bool {
        switch state {
        case .readingHead: return false
        case .discardingInput, .failed: return true
        }
    }

    /// Adds received bytes. Body bytes of the previous request are dropped here, unbuffered.
    public mutating func append(_ bytes: some Collection<UInt8>) {
        switch state {
        case .readingHead: break
        case .discardingInput, .failed: return
        }
        guard bodyBytesToSkip > 0 else {
            buffer.append(contentsOf: bytes)
            return
        }
        let skipped = min(bodyBytesToSkip, bytes.count)
        bodyBytesToSkip -= skipped
        buffer.append(contentsOf: bytes.dropFirst(skipped))
    }

    /// Returns the next complete request head, or nil until more bytes are appended.
    ///
    /// Call it again after a head: pipelined requests may already be buffered.
    /// - Throws: ``HTTPParseError``; every later call throws the same error.
    public mutating func next() throws(HTTPParseError) -> HTTPRequestHead? {
        switch state {
        case .readingHead: break
        case .discardingInput: return nil
        case .failed(let error): throw error
        }
        guard let end = findHeadEnd() else {
            if buffer.count >= maxHeadBytes { return try fail(.headTooLarge) }
            return nil
        }
        let head: HTTPRequestHead
        do {
            head = try HTTPHeadDecoder.decode(buffer[..<end], maxHeaders: maxHeaders)
        } catch {
            return try fail(error)
        }
        consume(end)
        if head.isChunked {
            state = .discardingInput
            buffer = []
        } else if let length = head.contentLength, length > 0 {
            let skipped = min(length, buffer.count)
            consume(skipped)
            bodyBytesToSkip = length - skipped
        }
        return head
    }

    /// Appends `bytes` and returns the next head: `append` followed by `next`.
    public mutating func parse(_ bytes: some Collection<UInt8>) throws(HTTPParseError) -> HTTPRequestHead? {
        append(bytes)
        return try next()
    }

    /// Hands over the bytes buffered after the last head and empties the parser. Used after
    /// a WebSocket upgrade: whatever the client sent behind the handshake is frames.
    public mutating func takeBufferedBytes() -> [UInt8] {
        let rest = buffer
        buffer = []
        scanIndex = 0
        lineStart = 0
        sawRequestLine = false
        return rest
    }

    /// Searches for the LF that ends the empty line closing the head, within the limit.
    private mutating func findHeadEnd() -> Int? {
        let limit = min(buffer.count, maxHeadBytes)
        var index = scanIndex
        defer { scanIndex = index }
        while index < limit {
            if buffer[index] == HTTPSyntax.lf {
                let isEmptyLine =
                    index == lineStart
                    || (index == lineStart + 1 && buffer[lineStart] == HTTPSyntax.cr)
                if isEmptyLine && sawRequestLine {
                    index += 1
                    return index
                }
                if !isEmptyLine { sawRequestLine = true }
                lineStart = index + 1
            }
            index += 1
        }
        return nil
    }

    /// Drops `count` consumed bytes and restarts the head search at the new front.
    private mutating func consume(_ count: Int) {
        if count >= buffer.count {
            buffer = []  // releases the capacity, not just the contents
        } else {
            buffer.removeFirst(count)
        }
        scanIndex = 0
        lineStart = 0
        sawRequestLine = false
    }

    private mutating func fail(_ error: HTTPParseError) throws(HTTPParseError) -> HTTPRequestHead? {
        state = .failed(error)
        buffer = []
        throw error
    }
}
