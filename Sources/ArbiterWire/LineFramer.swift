/// Splits a byte stream into lines ending in `\n` or `\r\n`, with a length limit.
///
/// Complete lines inside a chunk are handed out in place; only an unfinished tail is
/// copied, so an idle connection keeps no buffer at all. A line over the limit is
/// reported once and the rest of it, up to its newline, is skipped.
public struct LineFramer: Sendable {
    public enum Piece {
        /// A line without its terminator.
        case line(UnsafeBufferPointer<UInt8>)
        /// A line passed `maxLineBytes`; it is skipped to its end.
        case tooLong
    }

    public let maxLineBytes: Int
    private var partial: [UInt8] = []
    private var skipping = false

    public init(maxLineBytes: Int = 4096) {
        self.maxLineBytes = maxLineBytes
    }

    /// Bytes of an unfinished line held between reads.
    public var bufferedCount: Int { partial.count }

    /// Whether a line has begun but not ended.
    public var hasPartialLine: Bool { !partial.isEmpty || skipping }

    public mutating func feed(_ chunk: UnsafeBufferPointer<UInt8>, _ handle: (Piece) -> Void) {
        var start = 0
        let n = chunk.count
        while start < n {
            guard let nl = Self.indexOfNewline(chunk, from: start) else {
                take(tail: UnsafeBufferPointer(rebasing: chunk[start..<n]), handle)
                return
            }
            let segment = UnsafeBufferPointer(rebasing: chunk[start..<nl])
            start = nl + 1
            if skipping {
                skipping = false
                partial.removeAll()
                continue
            }
            if partial.isEmpty {
                emit(segment, handle)
            } else {
                if partial.count + segment.count > maxLineBytes + 1 {
                    partial = []
                    handle(.tooLong)
                    continue
                }
                partial.append(contentsOf: segment)
                let line = partial
                partial = []
                line.withUnsafeBufferPointer { emit($0, handle) }
            }
        }
    }

    private mutating func take(tail: UnsafeBufferPointer<UInt8>, _ handle: (Piece) -> Void) {
        if skipping { return }
        // +1: a line of exactly the limit may still be waiting for its "\r\n".
        if partial.count + tail.count > maxLineBytes + 1 {
            partial = []
            skipping = true
            handle(.tooLong)
            return
        }
        partial.append(contentsOf: tail)
    }

    private func emit(_ rawLine: UnsafeBufferPointer<UInt8>, _ handle: (Piece) -> Void) {
        var line = rawLine
        if let last = line.last, last == 0x0D { line = UnsafeBufferPointer(rebasing: line.dropLast()) }
        if line.count > maxLineBytes {
            handle(.tooLong)
        } else {
            handle(.line(line))
        }
    }

    private static func indexOfNewline(_ chunk: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        var i = start
        let n = chunk.count
        while i < n {
            if chunk[i] == 0x0A { return i }
            i += 1
        }
        return nil
    }
}
