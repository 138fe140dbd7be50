/// Byte strings found inside bytes by plain scans. Foundation's generic
/// `firstRange(of:)` costs several times more: in `RelayPayload.grantedFence`, asked of
/// every relayed DOWN's answer, it was a third of a relaying node's instructions, and the
/// generic `starts(with:)` over a `String.UTF8View` still cost 180 per call.
package enum ByteSearch {
    /// The index where `needle` first starts in `haystack`; nil if it is nowhere, or empty.
    package static func start(of needle: [UInt8], in haystack: ArraySlice<UInt8>) -> Int? {
        guard !needle.isEmpty, haystack.count >= needle.count else { return nil }
        return needle.withUnsafeBufferPointer { needle in
            haystack.withUnsafeBufferPointer { bytes -> Int? in
                var i = 0
                while i + needle.count <= bytes.count {
                    if matches(needle, in: bytes, at: i) { return haystack.startIndex + i }
                    i += 1
                }
                return nil
            }
        }
    }

    /// Whether `haystack` begins with `prefix`.
    package static func hasPrefix(_ prefix: [UInt8], _ haystack: ArraySlice<UInt8>) -> Bool {
        guard haystack.count >= prefix.count else { return false }
        return prefix.withUnsafeBufferPointer { prefix in
            haystack.withUnsafeBufferPointer { matches(prefix, in: $0, at: 0) }
        }
    }

    @inline(__always)
    private static func matches(_ needle: UnsafeBufferPointer<UInt8>, in bytes: UnsafeBufferPointer<UInt8>, at i: Int) -> Bool {
        var j = 0
        while j < needle.count {
            if bytes[i + j] != needle[j] { return false }
            j += 1
        }
        return true
    }
}
