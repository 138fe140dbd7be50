/// The split-feeding idea of swift-nio's ByteToMessageDecoderVerifier: an incremental
/// decoder must produce the same result however the same bytes are cut into reads.
enum SplitFeeding {
    /// The input whole, cut in two at every byte boundary, and one byte at a time.
    /// `splitPoints` narrows the two-piece cuts for inputs too large to try them all.
    static func chunkings(of bytes: [UInt8], splitPoints: [Int]? = nil) -> [[[UInt8]]] {
        var result: [[[UInt8]]] = [[bytes]]
        let points = splitPoints ?? Array(0...bytes.count)
        for point in points where point >= 0 && point <= bytes.count {
            result.append([Array(bytes[..<point]), Array(bytes[point...])])
        }
        result.append(bytes.map { [$0] })
        return result
    }

    /// Split points for large inputs: every cut within `edge` bytes of each end, and one
    /// every `stride` bytes in between.
    static func sampledPoints(count: Int, edge: Int = 40, stride step: Int = 997) -> [Int] {
        var points = Set(0...min(edge, count))
        points.formUnion(max(0, count - edge)...count)
        points.formUnion(Swift.stride(from: 0, through: count, by: step))
        return points.sorted()
    }
}
