/// Writes relay frames:
///
///     length (u32, big-endian; of what follows)   type (u8)   fields
///
/// Fields in the order of `RelayMessage`'s cases: integers as 8 bytes big-endian, strings
/// and byte strings as a u32 length and the bytes, an optional string as a presence byte
/// (0 or 1) and then the string. Binary and length-prefixed because the payloads (JSON
/// lines) are opaque here and a frame must be read without scanning for a delimiter.
public enum RelayFrameEncoder {
    public static func encode(_ message: RelayMessage) -> [UInt8] {
        // Sized exactly, then written through one pointer: appending field by field cost
        // about 2,000 instructions per frame (a capacity and uniqueness check per append),
        // and a relayed press encodes two frames, on the press path of both nodes.
        let size = 5 + fieldsSize(message)
        return [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            var w = Writer(base: buffer.baseAddress!)
            w.u32(UInt32(truncatingIfNeeded: size - 4))
            switch message {
            case .command(let c):
                w.byte(RelayFrameType.command)
                w.string(c.origin)
                w.integer(c.session)
                w.string(c.sessionName)
                w.optional(c.key)
                w.string(c.panel)
                w.bytes(c.command)
                w.integer(UInt64(bitPattern: c.arrivedAt))
                w.integer(c.incarnation)
                w.integer(c.serial)
                w.integer(UInt64(bitPattern: c.lease))
            case .reply(let panel, let term, let session, let line, let incarnation, let serial):
                w.byte(RelayFrameType.reply)
                w.string(panel)
                w.integer(UInt64(bitPattern: term))
                w.integer(session)
                w.bytes(line)
                w.integer(incarnation)
                w.integer(serial)
            case .event(let panel, let term, let seq, let line):
                w.byte(RelayFrameType.event)
                w.string(panel)
                w.integer(UInt64(bitPattern: term))
                w.integer(seq)
                w.bytes(line)
            case .sessionGone(let origin, let session, let incarnation, let lease):
                w.byte(RelayFrameType.sessionGone)
                w.string(origin)
                w.integer(session)
                w.integer(incarnation)
                w.integer(UInt64(bitPattern: lease))
            case .ping:
                w.byte(RelayFrameType.ping)
            case .stateQuery(let panel, let id):
                w.byte(RelayFrameType.stateQuery)
                w.string(panel)
                w.integer(id)
            case .stateAnswer(let panel, let term, let id, let state):
                w.byte(RelayFrameType.stateAnswer)
                w.string(panel)
                w.integer(UInt64(bitPattern: term))
                w.integer(id)
                w.bytes(state)
            case .kick(let id, let session, let key, let by):
                w.byte(RelayFrameType.kick)
                w.integer(id)
                w.integer(session)
                w.optional(key)
                w.integer(by)
            case .kickAnswer(let id, let session, let verdict, let detail):
                w.byte(RelayFrameType.kickAnswer)
                w.integer(id)
                w.integer(session)
                w.byte(verdict.rawValue)
                w.string(detail)
            case .grantEnded(let panel, let term, let session, let button, let fence, let reason):
                w.byte(RelayFrameType.grantEnded)
                w.string(panel)
                w.integer(UInt64(bitPattern: term))
                w.integer(session)
                w.string(button)
                w.integer(fence)
                w.string(reason.rawValue)
            case .typedEvent(let panel, let term, let seq, let lines):
                w.byte(RelayFrameType.typedEvent)
                w.string(panel)
                w.integer(UInt64(bitPattern: term))
                w.integer(seq)
                w.u32(UInt32(truncatingIfNeeded: lines.count))
                for line in lines {
                    switch line.fact {
                    case .plain:
                        w.byte(0)
                    case .granted(let button, let owner, let session, let fence):
                        w.byte(1)
                        w.integer(UInt64(button))
                        w.string(owner)
                        w.integer(session)
                        w.integer(fence)
                    case .released(let button, let fence, let reason):
                        w.byte(2)
                        w.integer(UInt64(button))
                        w.integer(fence)
                        w.string(reason.rawValue)
                    case .left(let session):
                        w.byte(3)
                        w.integer(session)
                    }
                    w.bytes(line.text)
                    w.bytes(line.json)
                }
            }
            // Every byte counted above was written: a mismatch would send garbage.
            precondition(w.written == size, "relay frame size miscounted")
            count = size
        }
    }

    /// A relayed press's `command` frame, written in one pass: the same bytes as `encode`
    /// of a `RelayCommand` whose command is the press's relay payload (ArbiterServer's
    /// `RelayPayload.command`: the reply form `J` or `T`, the term, a newline, then
    /// `<VERB> <panel> <button>` and ` fence=<n>` if any). Built without the
    /// `RelayCommand`, the payload array and the `RelayMessage` in between, which cost a
    /// relaying node about 3,000 instructions per relayed press (callgrind).
    public static func encodePress(
        origin: String, session: UInt64, sessionName: String, key: String?, panel: String, json: Bool, term: Int64, verb: String,
        button: String, fence: UInt64?, arrivedAt: Int64, incarnation: UInt64, serial: UInt64, lease: Int64
    ) -> [UInt8] {
        let payload =
            1 + Writer.digits(UInt64(clamping: term)) + 1 + verb.utf8.count + 1 + panel.utf8.count + 1 + button.utf8.count
            + (fence.map { 7 + Writer.digits($0) } ?? 0)
        let size = 5 + s(origin) + 8 + s(sessionName) + 1 + (key.map(s) ?? 0) + s(panel) + 4 + payload + 32
        return [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            var w = Writer(base: buffer.baseAddress!)
            w.u32(UInt32(truncatingIfNeeded: size - 4))
            w.byte(RelayFrameType.command)
            w.string(origin)
            w.integer(session)
            w.string(sessionName)
            w.optional(key)
            w.string(panel)
            w.u32(UInt32(truncatingIfNeeded: payload))
            w.byte(json ? 0x4A : 0x54)
            w.decimal(UInt64(clamping: term))
            w.byte(0x0A)
            w.text(verb)
            w.byte(0x20)
            w.text(panel)
            w.byte(0x20)
            w.text(button)
            if let fence {
                w.text(" fence=")
                w.decimal(fence)
            }
            w.integer(UInt64(bitPattern: arrivedAt))
            w.integer(incarnation)
            w.integer(serial)
            w.integer(UInt64(bitPattern: lease))
            precondition(w.written == size, "relay frame size miscounted")
            count = size
        }
    }

    /// The bytes after the length and the type.
    private static func fieldsSize(_ message: RelayMessage) -> Int {
        switch message {
        case .command(let c):
            s(c.origin) + 8 + s(c.sessionName) + 1 + (c.key.map(s) ?? 0) + s(c.panel) + 4 + c.command.count + 32
        case .reply(let panel, _, _, let line, _, _): s(panel) + 16 + 4 + line.count + 16
        case .event(let panel, _, _, let line): s(panel) + 16 + 4 + line.count
        case .sessionGone(let origin, _, _, _): s(origin) + 24
        case .ping: 0
        case .stateQuery(let panel, _): s(panel) + 8
        case .stateAnswer(let panel, _, _, let state): s(panel) + 16 + 4 + state.count
        case .kick(_, _, let key, _): 16 + 1 + (key.map(s) ?? 0) + 8
        case .kickAnswer(_, _, _, let detail): 16 + 1 + s(detail)
        case .grantEnded(let panel, _, _, let button, _, let reason): s(panel) + 16 + s(button) + 8 + s(reason.rawValue)
        case .typedEvent(let panel, _, _, let lines): s(panel) + 16 + 4 + lines.reduce(0) { $0 + lineSize($1) }
        }
    }

    private static func lineSize(_ line: RelayEventLine) -> Int {
        let fact =
            switch line.fact {
            case .plain: 1
            case .granted(_, let owner, _, _): 1 + 8 + s(owner) + 16
            case .released(_, _, let reason): 1 + 16 + s(reason.rawValue)
            case .left: 1 + 8
            }
        return fact + 4 + line.text.count + 4 + line.json.count
    }

    /// A string field's size: its length and its UTF-8.
    private static func s(_ string: String) -> Int { 4 + string.utf8.count }

    /// Writes fields through one pointer into memory sized beforehand.
    struct Writer {
        let base: UnsafeMutablePointer<UInt8>
        var written = 0

        mutating func byte(_ b: UInt8) {
            base[written] = b
            written += 1
        }

        mutating func u32(_ value: UInt32) {
            withUnsafeBytes(of: value.bigEndian) { raw(UnsafeRawBufferPointer($0)) }
        }

        mutating func integer(_ value: UInt64) {
            withUnsafeBytes(of: value.bigEndian) { raw(UnsafeRawBufferPointer($0)) }
        }

        mutating func string(_ s: String) {
            // One contiguous copy (a native string's UTF-8 is its storage).
            var s = s
            s.withUTF8 { utf8 in
                u32(UInt32(truncatingIfNeeded: utf8.count))
                raw(UnsafeRawBufferPointer(utf8))
            }
        }

        /// An optional string: a presence byte (0 or 1), then the string if present.
        mutating func optional(_ s: String?) {
            guard let s else { return byte(0) }
            byte(1)
            string(s)
        }

        /// A string's UTF-8 without a length.
        mutating func text(_ s: String) {
            var s = s
            s.withUTF8 { raw(UnsafeRawBufferPointer($0)) }
        }

        mutating func decimal(_ value: UInt64) {
            let n = Writer.digits(value)
            var v = value
            for i in stride(from: n - 1, through: 0, by: -1) {
                base[written + i] = UInt8(truncatingIfNeeded: v % 10) &+ 0x30
                v /= 10
            }
            written += n
        }

        static func digits(_ value: UInt64) -> Int {
            var n = 1
            var v = value
            while v >= 10 {
                v /= 10
                n += 1
            }
            return n
        }

        mutating func bytes(_ b: [UInt8]) {
            u32(UInt32(truncatingIfNeeded: b.count))
            b.withUnsafeBytes { raw($0) }
        }

        private mutating func raw(_ bytes: UnsafeRawBufferPointer) {
            guard let from = bytes.baseAddress, bytes.count > 0 else { return }
            UnsafeMutableRawPointer(base + written).copyMemory(from: from, byteCount: bytes.count)
            written += bytes.count
        }
    }
}
