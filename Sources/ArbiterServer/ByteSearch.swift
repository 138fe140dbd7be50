/// A byte string found inside bytes by a plain scan. Foundation's generic
/// `firstRange(of:)` costs several times more: in `RelayPayload.grantedFence`, asked of
/// every relayed DOWN's answer, it was a third of a relaying node's instructions.
enum ByteSearch {
    /// The index where `needle` first starts in `haystack`; nil if it is nowhere, or empty.
    static func start(of needle: [UInt8], in haystack: ArraySlice<UInt8>) -> Int? {
        guard let first = needle.first, haystack.count >= needle.count else { return nil }
        return needle.withUnsafeBufferPointer { needle in
            haystack.withUnsafeBufferPointer { bytes -> Int? in
                var i = 0
                while i + needle.count <= bytes.count {
                    if bytes[i] == first, (1..<needle.count).allSatisfy({ bytes[i + $0] == needle[$0] }) {
                        return haystack.startIndex + i
                    }
                    i += 1
                }
                return nil
            }
        }
    }
}
