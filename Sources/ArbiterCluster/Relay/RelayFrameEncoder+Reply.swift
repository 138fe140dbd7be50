extension RelayFrameEncoder {
    /// A `reply` frame whose line `writeLine` appends in place: the same bytes as `encode`
    /// of `.reply` with that line. A leader answers every relayed command with one, and
    /// rendering the answer into an array of its own, copying it behind its kind byte and
    /// then into the frame cost about 1,500 instructions per relayed press (callgrind).
    /// The line's length is not known before it is written, so its length field is filled
    /// in afterwards, as is the frame's.
    public static func encodeReply(
        panel: String, term: Int64, session: UInt64, incarnation: UInt64, serial: UInt64, expectedLine: Int = 96,
        writeLine: (inout [UInt8]) -> Void
    ) -> [UInt8] {
        // The part before the line written through one pointer, as `encode` writes a frame,
        // and appended at once: integer by integer it cost about 600 instructions per reply
        // frame (callgrind). Not `Array(unsafeUninitializedCapacity:)`: here that ran the
        // unspecialised initializer, with a metadata look-up per frame.
        let head = 4 + 1 + 4 + panel.utf8.count + 16 + 4
        var frame: [UInt8] = []
        frame.reserveCapacity(head + expectedLine + 16)
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: head) { buffer in
            var w = Writer(base: buffer.baseAddress!)
            w.u32(0)
            w.byte(RelayFrameType.reply)
            w.string(panel)
            w.integer(UInt64(bitPattern: term))
            w.integer(session)
            w.u32(0)
            frame.append(contentsOf: UnsafeBufferPointer(start: buffer.baseAddress, count: w.written))
        }
        writeLine(&frame)
        let lineLength = frame.count - head
        // The two integers after the line in one append.
        var tail = (incarnation.bigEndian, serial.bigEndian)
        withUnsafeBytes(of: &tail) { raw in raw.withMemoryRebound(to: UInt8.self) { frame.append(contentsOf: $0) } }
        frame.withUnsafeMutableBytes { bytes in
            bytes.storeBytes(of: UInt32(truncatingIfNeeded: bytes.count - 4).bigEndian, toByteOffset: 0, as: UInt32.self)
            bytes.storeBytes(of: UInt32(truncatingIfNeeded: lineLength).bigEndian, toByteOffset: head - 4, as: UInt32.self)
        }
        return frame
    }
}
