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
                if let key = c.key {
                    w.byte(1)
                    w.string(key)
                } else {
                    w.byte(0)
                }
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
            }
            // Every byte counted above was written: a mismatch would send garbage.
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
        }
    }

    /// A string field's size: its length and its UTF-8.
    private static func s(_ string: String) -> Int { 4 + string.utf8.count }

    private struct Writer {
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
