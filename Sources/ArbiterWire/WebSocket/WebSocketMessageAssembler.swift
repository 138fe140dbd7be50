/// Turns decoded frames into messages (RFC 6455 5.4-5.5): joins fragments, checks text for
/// UTF-8 as each fragment arrives, bounds the message size and parses close payloads.
///
/// Control frames may arrive between the fragments of a data message and are returned at
/// once. Fragments are copied into one growing buffer that is released after the message.
public struct WebSocketMessageAssembler: Sendable {
    /// The largest accepted message, all fragments together; beyond it `.messageTooBig`.
    public let maxMessage: Int

    private enum Kind: Sendable { case text, binary }

    /// The data message whose fragments are arriving, if any.
    private var kind: Kind?
    private var buffer: [UInt8] = []
    /// UTF-8 state after the fragments so far; carried across them so that an invalid byte
    /// fails the connection when its fragment arrives, not at the end of the message.
    private var validator = UTF8StreamValidator()
    /// Progress of ``inspect(_:payload:)`` on the frame still arriving.
    private var inspectedCount = 0
    private var inspectedValidator = UTF8StreamValidator()
    private var failure: WebSocketError?

    /// Creates an assembler for messages of at most `maxMessage` bytes.
    public init(maxMessage: Int) {
        self.maxMessage = maxMessage
    }

    /// Adds a frame; returns a message when one is complete.
    /// - Throws: ``WebSocketError``; every later call throws the same error.
    public mutating func push(_ frame: WebSocketFrame) throws(WebSocketError) -> WebSocketMessage? {
        if let failure { throw failure }
        inspectedCount = 0
        do {
            return try assemble(frame)
        } catch {
            failure = error
            buffer = []
            throw error
        }
    }

    private mutating func assemble(_ frame: WebSocketFrame) throws(WebSocketError) -> WebSocketMessage? {
        switch frame.opcode {
        case .ping: return .ping(frame.payload)
        case .pong: return .pong(frame.payload)
        case .close: return try Self.parseClose(frame.payload)
        case .text, .binary:
            guard kind == nil else { throw .protocolError("new data frame inside a fragmented message") }
            guard frame.payload.count <= maxMessage else { throw .messageTooBig }
            let isText = frame.opcode == .text
            validator = UTF8StreamValidator()
            if isText && !validator.feed(frame.payload) { throw .invalidUTF8 }
            if frame.fin { return try finish(isText ? .text : .binary, frame.payload) }
            kind = isText ? .text : .binary
            buffer = frame.payload
            return nil
        case .continuation:
            guard let open = kind else { throw .protocolError("continuation frame without a message") }
            guard frame.payload.count <= maxMessage - buffer.count else { throw .messageTooBig }
            if open == .text && !validator.feed(frame.payload) { throw .invalidUTF8 }
            buffer.append(contentsOf: frame.payload)
            guard frame.fin else { return nil }
            let message = buffer
            kind = nil
            buffer = []
            return try finish(open, message)
        }
    }

    private func finish(_ kind: Kind, _ bytes: [UInt8]) throws(WebSocketError) -> WebSocketMessage {
        switch kind {
        case .binary:
            return .binary(bytes)
        case .text:
            // The last fragment may not stop inside a code point.
            guard validator.isAtBoundary else { throw .invalidUTF8 }
            return .text(String(decoding: bytes, as: UTF8.self))
        }
    }

    /// Checks a frame whose payload is still arriving (`payload` is what arrived so far),
    /// so that a message that can only fail does so without waiting for the rest of it.
    mutating func inspect(_ header: WebSocketFrameDecoder.Header, payload: [UInt8]) throws(WebSocketError) {
        if let failure { throw failure }
        do {
            try inspectUnchecked(header, payload: payload)
        } catch {
            failure = error
            buffer = []
            throw error
        }
    }

    private mutating func inspectUnchecked(_ header: WebSocketFrameDecoder.Header, payload: [UInt8]) throws(WebSocketError) {
        let isText: Bool
        switch header.opcode {
        case .ping, .pong, .close:
            return
        case .text, .binary:
            guard kind == nil else { throw .protocolError("new data frame inside a fragmented message") }
            guard header.length <= maxMessage else { throw .messageTooBig }
            isText = header.opcode == .text
            if inspectedCount == 0 { inspectedValidator = UTF8StreamValidator() }
        case .continuation:
            guard let open = kind else { throw .protocolError("continuation frame without a message") }
            guard header.length <= maxMessage - buffer.count else { throw .messageTooBig }
            isText = open == .text
            if inspectedCount == 0 { inspectedValidator = validator }
        }
        guard isText, payload.count > inspectedCount else { return }
        if !inspectedValidator.feed(payload[inspectedCount...]) { throw .invalidUTF8 }
        inspectedCount = payload.count
    }

    /// Parses a close payload: empty, or a valid status code plus a UTF-8 reason.
    static func parseClose(_ payload: [UInt8]) throws(WebSocketError) -> WebSocketMessage {
        if payload.isEmpty { return .close(code: nil, reason: "") }
        guard payload.count >= 2 else { throw .protocolError("close payload of one byte") }
        let code = UInt16(payload[0]) << 8 | UInt16(payload[1])
        guard WebSocketCloseCode.isValidOnWire(code) else { throw .protocolError("invalid close code \(code)") }
        let reason = payload[2...]
        guard UTF8StreamValidator.isValid(reason) else { throw .invalidUTF8 }
        return .close(code: code, reason: String(decoding: reason, as: UTF8.self))
    }
}
