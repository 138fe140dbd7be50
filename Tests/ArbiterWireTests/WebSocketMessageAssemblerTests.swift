import Testing
import ArbiterWire

@Suite struct WebSocketMessageAssemblerTests {
    private func frame(_ opcode: WebSocketOpcode, _ payload: [UInt8], fin: Bool = true) -> WebSocketFrame {
        WebSocketFrame(fin: fin, opcode: opcode, payload: payload)
    }

    private func utf8(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test func singleFrameMessages() throws {
        var assembler = WebSocketMessageAssembler(maxMessage: 100)
        #expect(try assembler.push(frame(.text, utf8("Hello"))) == .text("Hello"))
        #expect(try assembler.push(frame(.text, [])) == .text(""))
        #expect(try assembler.push(frame(.binary, [0, 0xFF])) == .binary([0, 0xFF]))
        #expect(try assembler.push(frame(.ping, utf8("p"))) == .ping(utf8("p")))
        #expect(try assembler.push(frame(.pong, [])) == .pong([]))
    }

    @Test func rfcFragmentedHelloWithInterleavedControlFrames() throws {
        var assembler = WebSocketMessageAssembler(maxMessage: 100)
        #expect(try assembler.push(frame(.text, utf8("Hel"), fin: false)) == nil)
        #expect(try assembler.push(frame(.ping, utf8("Hello"))) == .ping(utf8("Hello")))
        #expect(try assembler.push(frame(.pong, [])) == .pong([]))
        #expect(try assembler.push(frame(.continuation, [], fin: false)) == nil)
        #expect(try assembler.push(frame(.continuation, utf8("lo"))) == .text("Hello"))
        #expect(try assembler.push(frame(.binary, [1], fin: false)) == nil)
        #expect(try assembler.push(frame(.continuation, [2])) == .binary([1, 2]))
    }

    @Test func codePointSplitAcrossFragmentsIsValid() throws {
        var assembler = WebSocketMessageAssembler(maxMessage: 100)
        #expect(try assembler.push(frame(.text, [0xE7, 0xB7], fin: false)) == nil)
        #expect(try assembler.push(frame(.continuation, [0x8A])) == .text("緊"))
    }

    @Test func continuationWithoutAStartIsAProtocolError() {
        var assembler = WebSocketMessageAssembler(maxMessage: 100)
        #expect(throws: WebSocketError.protocolError("continuation frame without a message")) {
            try assembler.push(frame(.continuation, utf8("x")))
        }
        #expect(WebSocketError.protocolError("").closeCode == 1002)
    }

    @Test func newDataFrameInsideAFragmentedMessageIsAProtocolError() throws {
        for opcode in [WebSocketOpcode.text, .binary] {
            var assembler = WebSocketMessageAssembler(maxMessage: 100)
            _ = try assembler.push(frame(.binary, [1], fin: false))
            #expect(throws: WebSocketError.protocolError("new data frame inside a fragmented message")) {
                try assembler.push(frame(opcode, [2]))
            }
        }
    }

    @Test func messageLimitCountsAllFragments() throws {
        var assembler = WebSocketMessageAssembler(maxMessage: 10)
        _ = try assembler.push(frame(.text, utf8("12345"), fin: false))
        _ = try assembler.push(frame(.continuation, utf8("1234"), fin: false))
        #expect(throws: WebSocketError.messageTooBig) { try assembler.push(frame(.continuation, utf8("12"))) }
        #expect(WebSocketError.messageTooBig.closeCode == 1009)
        var exact = WebSocketMessageAssembler(maxMessage: 10)
        _ = try exact.push(frame(.text, utf8("12345"), fin: false))
        #expect(try exact.push(frame(.continuation, utf8("12345"))) == .text("1234512345"))
        var single = WebSocketMessageAssembler(maxMessage: 10)
        #expect(throws: WebSocketError.messageTooBig) { try single.push(frame(.binary, [UInt8](repeating: 0, count: 11))) }
    }

    @Test func invalidUTF8FailsAtTheFragmentThatCarriesIt() throws {
        var assembler = WebSocketMessageAssembler(maxMessage: 100)
        // Reported on the first fragment: the final one has not been sent yet.
        #expect(throws: WebSocketError.invalidUTF8) {
            try assembler.push(frame(.text, utf8("ok ") + [0xCE, 0xBA, 0xED, 0xA0, 0x80], fin: false))
        }
        #expect(WebSocketError.invalidUTF8.closeCode == 1007)
        var second = WebSocketMessageAssembler(maxMessage: 100)
        _ = try second.push(frame(.text, utf8("fine"), fin: false))
        #expect(throws: WebSocketError.invalidUTF8) { try second.push(frame(.continuation, [0xF5], fin: false)) }
    }

    @Test func finalFragmentEndingInsideACodePointIsInvalid() throws {
        var assembler = WebSocketMessageAssembler(maxMessage: 100)
        _ = try assembler.push(frame(.text, utf8("a"), fin: false))
        #expect(throws: WebSocketError.invalidUTF8) { try assembler.push(frame(.continuation, [0xF0, 0x9F])) }
        var single = WebSocketMessageAssembler(maxMessage: 100)
        #expect(throws: WebSocketError.invalidUTF8) { try single.push(frame(.text, [0xC3])) }
    }

    @Test func binaryIsNotValidatedAsText() throws {
        var assembler = WebSocketMessageAssembler(maxMessage: 100)
        #expect(try assembler.push(frame(.binary, [0xFF, 0xC0])) == .binary([0xFF, 0xC0]))
        #expect(WebSocketError.unsupportedData.closeCode == 1003)
    }

    @Test func closePayloads() throws {
        var assembler = WebSocketMessageAssembler(maxMessage: 100)
        #expect(try assembler.push(frame(.close, [])) == .close(code: nil, reason: ""))
        #expect(try assembler.push(frame(.close, [0x03, 0xE8])) == .close(code: 1000, reason: ""))
        #expect(try assembler.push(frame(.close, [0x03, 0xE9] + utf8("bye 緊"))) == .close(code: 1001, reason: "bye 緊"))
    }

    @Test func closeWithOneByteIsAProtocolError() {
        var assembler = WebSocketMessageAssembler(maxMessage: 100)
        #expect(throws: WebSocketError.protocolError("close payload of one byte")) {
            try assembler.push(frame(.close, [0x03]))
        }
    }

    @Test(arguments: [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 3000, 3999, 4000, 4999])
    func validCloseCodes(code: Int) throws {
        var assembler = WebSocketMessageAssembler(maxMessage: 100)
        let message = try assembler.push(frame(.close, [UInt8(code >> 8), UInt8(code & 0xFF)]))
        #expect(message == .close(code: UInt16(code), reason: ""))
    }

    @Test(arguments: [0, 999, 1004, 1005, 1006, 1012, 1013, 1014, 1015, 1016, 1100, 2000, 2999, 5000, 65535])
    func invalidCloseCodes(code: Int) {
        var assembler = WebSocketMessageAssembler(maxMessage: 100)
        #expect(throws: WebSocketError.protocolError("invalid close code \(code)")) {
            try assembler.push(frame(.close, [UInt8(code >> 8), UInt8(code & 0xFF)]))
        }
    }

    @Test func closeReasonMustBeUTF8() {
        var assembler = WebSocketMessageAssembler(maxMessage: 100)
        #expect(throws: WebSocketError.invalidUTF8) { try assembler.push(frame(.close, [0x03, 0xE8, 0xCE, 0xBA, 0xFF])) }
        #expect(throws: WebSocketError.invalidUTF8) { try assembler.push(frame(.ping, [])) }  // sticky
    }
}
