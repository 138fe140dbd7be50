import ArbiterCore
import ArbiterWire

/// Reads relay frames (`RelayFrameEncoder`'s layout) from bytes in any chunks. A frame's
/// length is checked against the limit as soon as its 4-byte prefix is in, before any of
/// it is kept; a frame whose fields do not fill it exactly is malformed. After an error
/// the link is closed: the decoder does not try to resynchronise.
public struct RelayFrameDecoder: Sendable {
    public let limits: RelayLimits
    private var buffer: [UInt8] = []
    private var start = 0

    public init(limits: RelayLimits = .standard) {
        self.limits = limits
    }

    public mutating func append(_ bytes: some Collection<UInt8>) {
        buffer.append(contentsOf: bytes)
    }

    /// The next complete message, nil if more bytes are needed.
    public mutating func next() throws(RelayError) -> RelayMessage? {
        guard buffer.count - start >= 4 else { return nil }
        let size = Int(buffer[start]) << 24 | Int(buffer[start + 1]) << 16 | Int(buffer[start + 2]) << 8 | Int(buffer[start + 3])
        guard size <= limits.maxFrameBytes else { throw .frameTooLarge(size: size, limit: limits.maxFrameBytes) }
        guard size >= 1 else { throw .malformedFrame("empty frame") }
        guard buffer.count - start >= 4 + size else { return nil }
        // Read before the buffer is compacted: the reader's pointer is into the buffer's
        // storage, valid only inside this closure.
        let from = start + 4
        let message = try buffer.withUnsafeBufferPointer { all throws(RelayError) -> RelayMessage in
            var reader = Reader(bytes: UnsafeBufferPointer(rebasing: all[from..<(from + size)]))
            let message = try reader.message()
            guard reader.atEnd else { throw RelayError.malformedFrame("bytes left over after the fields") }
            return message
        }
        start += 4 + size
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        } else if start > 4096 && start * 2 > buffer.count {
            buffer.removeFirst(start)
            start = 0
        }
        return message
    }

    /// Reads through a pointer into the decoder's buffer, valid only during `next`: an
    /// `ArraySlice` cut down field by field cost a bounds check and a reference count at
    /// every step, about 1,000 instructions per relayed command (callgrind).
    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var at = 0

        var atEnd: Bool { at == bytes.count }

        private var left: Int { bytes.count - at }

        mutating func message() throws(RelayError) -> RelayMessage {
            let type = try byte()
            switch type {
            case RelayFrameType.command:
                let origin = try string()
                let session = try integer()
                let name = try string()
                let key = try optionalString()
                return .command(
                    RelayCommand(
                        origin: origin, session: session, sessionName: name, key: key, panel: try string(),
                        command: try data(), arrivedAt: Int64(bitPattern: try integer()), incarnation: try integer(), serial: try integer(),
                        lease: Int64(bitPattern: try integer())))
            case RelayFrameType.reply:
                return .reply(
                    panel: try string(), term: try term(), session: try integer(), line: try data(), incarnation: try integer(), serial: try integer())
            case RelayFrameType.event:
                return .event(panel: try string(), term: try term(), seq: try integer(), line: try data())
            case RelayFrameType.sessionGone:
                return .sessionGone(origin: try string(), session: try integer(), incarnation: try integer(), lease: Int64(bitPattern: try integer()))
            case RelayFrameType.ping:
                return .ping
            case RelayFrameType.stateQuery:
                return .stateQuery(panel: try string(), id: try integer())
            case RelayFrameType.stateAnswer:
                return .stateAnswer(panel: try string(), term: try term(), id: try integer(), state: try data())
            case RelayFrameType.kick:
                let id = try integer()
                let session = try integer()
                let key = try optionalString()
                return .kick(id: id, session: session, key: key, by: try integer())
            case RelayFrameType.kickAnswer:
                let id = try integer()
                let session = try integer()
                let raw = try byte()
                guard let verdict = RelayKickVerdict(rawValue: raw) else { throw .malformedFrame("kick verdict \(raw)") }
                return .kickAnswer(id: id, session: session, verdict: verdict, detail: try string())
            case RelayFrameType.grantEnded:
                let (panel, term, session, button, fence) = (try string(), try term(), try integer(), try string(), try integer())
                let raw = try string()
                guard let reason = ReleaseReason(rawValue: raw) else { throw .malformedFrame("release reason \(raw)") }
                return .grantEnded(panel: panel, term: term, session: session, button: button, fence: fence, reason: reason)
            case RelayFrameType.typedEvent:
                let (panel, term, seq) = (try string(), try term(), try integer())
                let count = try u32()
                // Each line takes at least 9 bytes: a count past what is left is malformed,
                // and no array is sized by a peer's word alone.
                guard count <= left / 9 else { throw .malformedFrame("\(count) event lines in \(left) bytes") }
                var lines: [RelayEventLine] = []
                lines.reserveCapacity(count)
                for _ in 0..<count { lines.append(try eventLine()) }
                return .typedEvent(panel: panel, term: term, seq: seq, lines: lines)
            default:
                throw .malformedFrame("unknown frame type \(type)")
            }
        }

        mutating func byte() throws(RelayError) -> UInt8 {
            guard left >= 1 else { throw .malformedFrame("frame ends inside a field") }
            defer { at += 1 }
            return bytes[at]
        }

        mutating func integer() throws(RelayError) -> UInt64 {
            guard left >= 8 else { throw .malformedFrame("frame ends inside a field") }
            var value: UInt64 = 0
            for i in at..<(at + 8) { value = value << 8 | UInt64(bytes[i]) }
            at += 8
            return value
        }

        mutating func term() throws(RelayError) -> Int64 {
            let value = Int64(bitPattern: try integer())
            guard value > 0 else { throw .malformedFrame("term \(value)") }
            return value
        }

        mutating func field() throws(RelayError) -> UnsafeBufferPointer<UInt8> {
            guard left >= 4 else { throw .malformedFrame("frame ends inside a field") }
            var count = 0
            for i in at..<(at + 4) { count = count << 8 | Int(bytes[i]) }
            at += 4
            guard left >= count else { throw .malformedFrame("a field is longer than its frame") }
            defer { at += count }
            return UnsafeBufferPointer(rebasing: bytes[at..<(at + count)])
        }

        /// A presence byte, 0 or 1 (anything else is malformed: one spelling per frame),
        /// then the string if present.
        mutating func optionalString() throws(RelayError) -> String? {
            switch try byte() {
            case 0: return nil
            case 1: return try string()
            case let other: throw .malformedFrame("presence byte \(other)")
            }
        }

        mutating func data() throws(RelayError) -> [UInt8] {
            Array(try field())
        }

        mutating func u32() throws(RelayError) -> Int {
            guard left >= 4 else { throw .malformedFrame("frame ends inside a field") }
            var count = 0
            for i in at..<(at + 4) { count = count << 8 | Int(bytes[i]) }
            at += 4
            return count
        }

        /// A button index: a panel has far fewer than 2^31 buttons.
        mutating func button() throws(RelayError) -> Int {
            let value = try integer()
            guard value <= UInt64(Int32.max) else { throw .malformedFrame("button index \(value)") }
            return Int(value)
        }

        mutating func reason() throws(RelayError) -> ReleaseReason {
            let raw = try string()
            guard let reason = ReleaseReason(rawValue: raw) else { throw .malformedFrame("release reason \(raw)") }
            return reason
        }

        mutating func eventLine() throws(RelayError) -> RelayEventLine {
            let fact: RelayEventLine.Fact
            switch try byte() {
            case 0: fact = .plain
            case 1: fact = .granted(button: try button(), owner: try string(), session: try integer(), fence: try integer())
            case 2: fact = .released(button: try button(), fence: try integer(), reason: try reason())
            case 3: fact = .left(session: try integer())
            case let other: throw .malformedFrame("event fact \(other)")
            }
            return RelayEventLine(fact: fact, text: try data(), json: try data())
        }

        mutating func string() throws(RelayError) -> String {
            // The project's validator, then a plain decode: `String(validating:)` on a slice
            // cost about 850 instructions per short name, four names per relayed command.
            let raw = try field()
            guard UTF8Validator.isValid(raw) else { throw .malformedFrame("a string is not UTF-8") }
            return String(decoding: raw, as: UTF8.self)
        }
    }
}
