import ArbiterWire

/// libFuzzer target: the WebSocket reader (frames, fragments, UTF-8, close payloads)
/// on arbitrary client bytes, with small limits so the size checks are reached.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWebSocket(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: count)
    var reader = WebSocketReader(maxPayload: 4096, maxMessage: 8192)
    let cut = count > 1 ? Int(bytes[0]) % count : 0
    for piece in [bytes[..<cut], bytes[cut...]] {
        reader.append(piece)
        for _ in 0..<10_000 {
            do {
                guard let message = try reader.next() else { break }
                if case .text(let text) = message {
                    var copy = text
                    _ = copy.withUTF8 { JSONCommandParser.parse($0) }
                }
            } catch {
                _ = error.closeCode
                return 0
            }
        }
    }
    return 0
}
