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
        // One buffer, sized once, the length filled in last: a relayed press encodes two
        // of these, on the press path of both nodes.
        var body: [UInt8] = []
        body.reserveCapacity(96 + payloadSize(message))
        body.append(contentsOf: [0, 0, 0, 0])
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
            integer(c.serial, &body)
            integer(UInt64(bitPattern: c.lease), &body)
        case .reply(let panel, let term, let session, let line, let incarnation, let serial):
            body.append(RelayFrameType.reply)
            string(panel, &body)
            integer(UInt64(bitPattern: term), &body)
            integer(session, &body)
            bytes(line, &body)
            integer(incarnation, &body)
            integer(serial, &body)
        case .event(let panel, let term, let seq, let line):
            body.append(RelayFrameType.event)
            string(panel, &body)
            integer(UInt64(bitPattern: term), &body)
            integer(seq, &body)
            bytes(line, &body)
        case .sessionGone(let origin, let session, let incarnation, let lease):
            body.append(RelayFrameType.sessionGone)
            string(origin, &body)
            integer(session, &body)
            integer(incarnation, &body)
            integer(UInt64(bitPattern: lease), &body)
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
        let size = UInt32(truncatingIfNeeded: body.count - 4)
        body[0] = UInt8(truncatingIfNeeded: size >> 24)
        body[1] = UInt8(truncatingIfNeeded: size >> 16)
        body[2] = UInt8(truncatingIfNeeded: size >> 8)
        body[3] = UInt8(truncatingIfNeeded: size)
        return body
    }

    /// The bytes of the message's byte-string fields: the rest is a few short names.
    private static func payloadSize(_ message: RelayMessage) -> Int {
        switch message {
        // Every variable part: a short guess made the buffer grow once per frame.
        case .command(let c): c.command.count + c.sessionName.utf8.count + (c.key?.utf8.count ?? 0) + c.origin.utf8.count + c.panel.utf8.count
        case .reply(let panel, _, _, let line, _, _), .event(let panel, _, _, let line), .snapshot(let panel, _, _, _, let line):
            panel.utf8.count + line.count
        case .sessionGone, .snapshotRequest, .term, .ping: 0
        }
    }

    private static func integer(_ value: UInt64, _ out: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { out.append(contentsOf: $0) }
    }

    private static func length(_ count: Int, _ out: inout [UInt8]) {
        withUnsafeBytes(of: UInt32(truncatingIfNeeded: count).bigEndian) { out.append(contentsOf: $0) }
    }

    private static func string(_ s: String, _ out: inout [UInt8]) {
        // As one contiguous copy: appending `s.utf8` went byte by byte through the view.
        var s = s
        s.withUTF8 { utf8 in
            length(utf8.count, &out)
            out.append(contentsOf: utf8)
        }
    }

    private static func bytes(_ b: [UInt8], _ out: inout [UInt8]) {
        length(b.count, &out)
        out.append(contentsOf: b)
    }
}
