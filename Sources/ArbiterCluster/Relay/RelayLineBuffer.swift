/// Splits handshake bytes into lines, refusing a line longer than the limit before
/// keeping it. Whatever follows the last complete line stays, for the frame decoder.
struct RelayLineBuffer: Sendable {
    let limit: Int
    private(set) var pending: [UInt8] = []

    init(limit: Int) {
        self.limit = limit
    }

    mutating func append(_ bytes: some Collection<UInt8>) {
        pending.append(contentsOf: bytes)
    }

    /// The next complete line without its newline, nil if none is complete yet.
    mutating func nextLine() throws(RelayError) -> Substring? {
        guard let newline = pending.firstIndex(of: 0x0A) else {
            if pending.count >= limit { throw .lineTooLong(limit: limit) }
            return nil
        }
        guard newline + 1 <= limit else { throw .lineTooLong(limit: limit) }
        let line = String(decoding: pending[..<newline], as: UTF8.self)
        pending.removeFirst(newline + 1)
        return Substring(line)
    }

    /// Everything not consumed as a line; empties the buffer.
    mutating func takeRest() -> [UInt8] {
        defer { pending = [] }
        return pending
    }
}
