import ArbiterCluster

/// libFuzzer target: the relay frame decoder (reads through a pointer into its buffer
/// since c132d16) on arbitrary bytes split in two, with a small frame limit so the size
/// check is reached. A decoded message must encode back to the bytes it came from: the
/// layout has one spelling per message, and the fields must fill the frame exactly.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRelayFrame(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: count)
    var decoder = RelayFrameDecoder(limits: RelayLimits(maxFrameBytes: 4096))
    let cut = count > 1 ? Int(bytes[0]) % count : 0
    var consumed = 0
    for piece in [bytes[..<cut], bytes[cut...]] {
        decoder.append(piece)
        for _ in 0..<10_000 {
            do {
                guard let message = try decoder.next() else { break }
                let encoded = RelayFrameEncoder.encode(message)
                precondition(Array(bytes[consumed..<(consumed + encoded.count)]) == encoded, "a relay frame decoded to another frame's message")
                consumed += encoded.count
            } catch {
                return 0
            }
        }
    }
    return 0
}
