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
    var failed = false
    for byte in bytes where !failed && splitHeads.count < 100 {
        split.append([byte])
        for _ in 0..<100 {
            do {
                guard splitHeads.count < 100, let head = try split.next() else { break }
                splitHeads.append(head)
            } catch {
                failed = true
                break
            }
        }
    }
    // Incremental parsing must not depend on how the bytes were cut.
    precondition(splitHeads == heads, "byte-at-a-time parsing gave different heads")
    return 0
}
