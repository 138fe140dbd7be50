/// Reads RESP2 replies from a byte buffer, one at a time, without allocating.
public enum RESPParser {
    public enum Outcome: Equatable {
        /// A complete reply and the index just past it.
        case reply(RESPReply, end: Int)
        /// The reply at `start` is not complete yet.
        case needMore
        /// Not RESP: the connection cannot be read any further.
        case invalid
    }

    public static func parse(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Outcome {
        guard start < bytes.count else { return .needMore }
        guard let line = lineEnd(bytes, start + 1) else { return .needMore }
        let body = (start + 1)..<line
        switch bytes[start] {
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            var r = RESPReply(kind: bytes[start] == UInt8(ascii: "+") ? .simple : .error)
            r.range = body
            return .reply(r, end: line + 2)
        case UInt8(ascii: ":"):
            guard let n = signed(bytes, body) else { return .invalid }
            var r = RESPReply(kind: .integer)
            r.integer = n
            return .reply(r, end: line + 2)
        case UInt8(ascii: "$"):
            guard let n = signed(bytes, body) else { return .invalid }
            if n < 0 { return .reply(RESPReply(kind: .null), end: line + 2) }
            let payload = line + 2
            guard payload + Int(n) + 2 <= bytes.count else { return .needMore }
            var r = RESPReply(kind: .bulk)
            r.range = payload..<(payload + Int(n))
            return .reply(r, end: payload + Int(n) + 2)
        case UInt8(ascii: "*"):
            guard let n = signed(bytes, body) else { return .invalid }
            if n < 0 { return .reply(RESPReply(kind: .null), end: line + 2) }
            var r = RESPReply(kind: .array)
            r.count = Int(n)
            var at = line + 2
            for i in 0..<Int(n) {
                switch parse(bytes, from: at) {
                case .reply(let element, let end):
                    // Nested arrays are skipped over, only their extent matters here.
                    r.setElement(i, RESPReply.Element(kind: element.kind, range: element.range, integer: element.integer))
                    at = end
                case .needMore: return .needMore
                case .invalid: return .invalid
                }
            }
            return .reply(r, end: at)
        default:
            return .invalid
        }
    }

    /// The index of the `\r` of the CRLF ending the line that starts at `from`.
    @inline(__always)
    static func lineEnd(_ bytes: UnsafeBufferPointer<UInt8>, _ from: Int) -> Int? {
        var i = from
        while i + 1 < bytes.count {
            if bytes[i] == 0x0D && bytes[i + 1] == 0x0A { return i }
            i += 1
        }
        return nil
    }

    @inline(__always)
    static func signed(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Int64? {
        guard let first = range.first else { return nil }
        if bytes[first] == UInt8(ascii: "-") {
            return ByteText.integer(bytes, (first + 1)..<range.upperBound).map { -$0 }
        }
        return ByteText.integer(bytes, range)
    }
}
