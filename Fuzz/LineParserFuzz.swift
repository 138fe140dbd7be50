import ArbiterCore
import ArbiterWire

/// libFuzzer target: the line framer and the text/JSON command parsers, on any bytes.
/// Every line must decode to a command, a failure or nothing; replies must encode.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLine(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: count)
    var framer = LineFramer(maxLineBytes: 256)
    // Feed in two pieces split by the first byte, so splits are explored too.
    let cut = count > 0 ? Int(bytes[0]) % (count + 1) : 0
    for piece in [UnsafeBufferPointer(rebasing: bytes[..<cut]), UnsafeBufferPointer(rebasing: bytes[cut...])] {
        framer.feed(piece) { item in
            guard case .line(let line) = item else { return }
            switch TextCommandParser.parse(line) {
            case .command(let command):
                var out: [UInt8] = []
                // The request's own text (names, tokens, ids from the input) must not break the line.
                MessageEncoder.encode(.error(.badSyntax, String(describing: command.request)), format: command.format, id: command.id, into: &out)
                precondition(out.last == 0x0A && out.dropLast().allSatisfy { $0 != 0x0A }, "a reply spans lines")
            case .failure(let error):
                var out: [UInt8] = []
                MessageEncoder.encode(.error(error.code, error.message), format: .text, into: &out)
                precondition(out.dropLast().allSatisfy { $0 != 0x0A && $0 != 0x0D }, "an error line was broken by its input")
            case .empty:
                break
            }
        }
    }
    return 0
}
