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
        var body: [UInt8] = []
        switch message {
        case .command(let c):
            body.append(RelayFrameType.command)
            string(c.origin, &body)
            integer(c.session, &body)
            string(c.sessionName, &body)
            if let key = c.key {
                body.append(1)
                string(key, &body)
            } else {
                body.append(0)
            }
            string(c.panel, &body)
            bytes(c.command, &body)
            integer(UInt64(bitPattern: c.arrivedAt), &body)
            integer(c.incarnation, &body)
        case .reply(let panel, let term, let session, let line, let incarnation):
            body.append(RelayFrameType.reply)
            string(panel, &body)
            integer(UInt64(bitPattern: term), &body)
            integer(session, &body)
            bytes(line, &body)
            integer(incarnation, &body)
        case .event(let panel, let term, let seq, let line):
            body.append(RelayFrameType.event)
            string(panel, &body)
            integer(UInt64(bitPattern: term), &body)
            integer(seq, &body)
            bytes(line, &body)
        case .sessionGone(let origin, let session, let incarnation):
            body.append(RelayFrameType.sessionGone)
            string(origin, &body)
            integer(session, &body)
            integer(incarnation, &body)
        case .snapshotRequest(let panel, let request):
            body.append(RelayFrameType.snapshotRequest)
            string(panel, &body)
            integer(request, &body)
        case .snapshot(let panel, let term, let seq, let request, let line):
            body.append(RelayFrameType.snapshot)
            string(panel, &body)
            integer(UInt64(bitPattern: term), &body)
            integer(seq, &body)
            integer(request, &body)
            bytes(line, &body)
        case .term(let panel, let term, let leader):
            body.append(RelayFrameType.term)
            string(panel, &body)
            integer(UInt64(bitPattern: term), &body)
            string(leader, &body)
        case .ping:
            body.append(RelayFrameType.ping)
        }
        var frame: [UInt8] = []
        frame.reserveCapacity(4 + body.count)
        length(body.count, &frame)
        frame += body
        return frame
    }

    private static func integer(_ value: UInt64, _ out: inout [UInt8]) {
        for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    private static func length(_ count: Int, _ out: inout [UInt8]) {
        let value = UInt32(truncatingIfNeeded: count)
        for shift in stride(from: 24, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    private static func string(_ s: String, _ out: inout [UInt8]) {
        bytes(Array(s.utf8), &out)
    }

    private static func bytes(_ b: [UInt8], _ out: inout [UInt8]) {
        length(b.count, &out)
        out += b
    }
}
