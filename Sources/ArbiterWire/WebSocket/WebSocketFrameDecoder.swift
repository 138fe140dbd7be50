/// An incremental decoder of WebSocket frames sent by a client (RFC 6455 section 5).
///
/// ``append(_:)`` what the socket produced, then call ``next()`` until it returns nil.
/// Every header rule is checked as soon as the bytes carrying it arrive, so a bad frame is
/// refused before its payload is awaited. Payloads are unmasked as they arrive, eight bytes
/// at a time. Once ``next()`` returns nil the decoder holds only the bytes of the frame in
/// progress, and none at all between frames.
///
/// Frame-level rules only: fragmentation, UTF-8 and close payloads are checked by
/// ``WebSocketMessageAssembler`` (or both at once by ``WebSocketReader``).
public struct WebSocketFrameDecoder: Sendable {
    /// The largest accepted payload of one frame; beyond it ``WebSocketError/messageTooBig``.
    public let maxPayload: Int
    /// Whether frames must be masked: true for a server reading client frames (RFC 6455
    /// 5.1); false lets a client or test tool read server frames.
    public let requiresMasking: Bool

    /// What the header of the frame in progress said.
    struct Header: Sendable {
        var fin: Bool
        var opcode: WebSocketOpcode
        var maskingKey: UInt32?
        var length: Int
    }

    private var input: [UInt8] = []
    /// Bytes of `input` before this index are consumed; the front is dropped lazily so that
    /// several frames in one read are not each paid for with a copy of the rest.
    private var inputStart = 0
    private var header: Header?
    private var payload: [UInt8] = []
    private var failure: WebSocketError?

    /// Creates a decoder for client frames of at most `maxPayload` bytes each.
    public init(maxPayload: Int, requiresMasking: Bool = true) {
        self.maxPayload = maxPayload
        self.requiresMasking = requiresMasking
    }

    /// The header of the frame whose payload is still arriving, if any.
    var partialHeader: Header? { header }

    /// The unmasked payload bytes of the frame in progress received so far.
    var partialPayload: [UInt8] { payload }

    /// Adds received bytes.
    public mutating func append(_ bytes: some Collection<UInt8>) {
        guard failure == nil else { return }
        input.append(contentsOf: bytes)
    }

    /// Returns the next complete frame, or nil until more bytes are appended.
    /// - Throws: ``WebSocketError``; every later call throws the same error.
    public mutating func next() throws(WebSocketError) -> WebSocketFrame? {
        if let failure { throw failure }
        if header == nil {
            do {
                header = try parseHeader()
            } catch {
                failure = error
                input = []
                inputStart = 0
                throw error
            }
        }
        guard let current = header else {
            compactInput()
            return nil
        }
        let wanted = current.length - payload.count
        let take = min(wanted, input.count - inputStart)
        if take > 0 {
            let oldCount = payload.count
            if oldCount == 0 && take == current.length {
                payload = Array(input[inputStart..<(inputStart + take)])
            } else {
                payload.append(contentsOf: input[inputStart..<(inputStart + take)])
            }
            inputStart += take
            if let key = current.maskingKey {
                WebSocketMasking.apply(
                    key: key, phase: oldCount & 3, to: &payload,
                    range: oldCount..<payload.count)
            }
        }
        guard payload.count == current.length else {
            compactInput()
            return nil
        }
        let frame = WebSocketFrame(fin: current.fin, opcode: current.opcode, payload: payload)
        header = nil
        payload = []
        if inputStart == input.count { compactInput() }
        return frame
    }

    /// Drops consumed input; releases the buffer entirely when nothing is left.
    private mutating func compactInput() {
        if inputStart == input.count {
            input = []
        } else if inputStart > 0 {
            input = Array(input[inputStart...])
        }
        inputStart = 0
    }

    /// Parses the header at the front of the input, consuming it, or returns nil (consuming
    /// nothing) if it is incomplete. Checks each field as soon as it is present.
    private mutating func parseHeader() throws(WebSocketError) -> Header? {
        let available = input.count - inputStart
        guard available >= 1 else { return nil }
        let first = input[inputStart]
        if first & 0x70 != 0 {
            throw .protocolError("reserved bits set without a negotiated extension")
        }
        guard let opcode = WebSocketOpcode(rawValue: first & 0x0F) else {
            throw .protocolError("reserved opcode \(first & 0x0F)")
        }
        let fin = first & 0x80 != 0
        if opcode.isControl && !fin { throw .protocolError("fragmented control frame") }
        guard available >= 2 else { return nil }

        let second = input[inputStart + 1]
        let masked = second & 0x80 != 0
        if requiresMasking && !masked { throw .protocolError("unmasked client frame") }
        if !requiresMasking && masked { throw .protocolError("masked server frame") }
        let shortLength = Int(second & 0x7F)
        if opcode.isControl && shortLength > 125 { throw .protocolError("control frame payload over 125 bytes") }

        let extendedBytes = shortLength == 127 ? 8 : (shortLength == 126 ? 2 : 0)
        guard available >= 2 + extendedBytes else { return nil }
        var length = shortLength
        if extendedBytes > 0 {
            var value: UInt64 = 0
            for index in 0..<extendedBytes {
                value = value << 8 | UInt64(input[inputStart + 2 + index])
            }
            if value & (1 << 63) != 0 { throw .protocolError("64-bit length with the top bit set") }
            guard value <= UInt64(maxPayload) else { throw .messageTooBig }
            length = Int(value)
        }
        if length > maxPayload { throw .messageTooBig }

        let headerLength = 2 + extendedBytes + (masked ? 4 : 0)
        guard available >= headerLength else { return nil }
        var key: UInt32?
        if masked {
            let keyStart = inputStart + 2 + extendedBytes
            key =
                UInt32(input[keyStart]) << 24 | UInt32(input[keyStart + 1]) << 16
                | UInt32(input[keyStart + 2]) << 8 | UInt32(input[keyStart + 3])
        }
        inputStart += headerLength
        return Header(fin: fin, opcode: opcode, maskingKey: key, length: length)
    }
}
