import Testing
import ArbiterWire

@Suite struct UTF8StreamValidatorTests {
    @Test func acceptsValidText() {
        for text in ["", "hello", "κόσμε", "緊急", "🙂 emoji", String(repeating: "ascii ", count: 50) + "é"] {
            #expect(UTF8StreamValidator.isValid(Array(text.utf8)), "\(text)")
        }
        #expect(UTF8StreamValidator.isValid([0xF4, 0x8F, 0xBF, 0xBF]))  // U+10FFFF
        #expect(UTF8StreamValidator.isValid([0xED, 0x9F, 0xBF]))  // U+D7FF
        #expect(UTF8StreamValidator.isValid([0xEE, 0x80, 0x80]))  // U+E000
    }

    @Test func refusesInvalidSequences() {
        let bad: [[UInt8]] = [
            [0x80], [0xBF], [0xC0, 0x80], [0xC1, 0xBF],  // stray / overlong 2-byte
            [0xE0, 0x80, 0x80], [0xE0, 0x9F, 0xBF],  // overlong 3-byte
            [0xED, 0xA0, 0x80], [0xED, 0xBF, 0xBF],  // surrogates
            [0xF0, 0x80, 0x80, 0x80], [0xF0, 0x8F, 0xBF, 0xBF],  // overlong 4-byte
            [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80],  // above U+10FFFF
            [0xFE], [0xFF], [0xC2, 0x41], [0xE2, 0x82],  // bad continuation / truncated
            Array("abcdefgh".utf8) + [0xFF] + Array("ijklmnop".utf8),
        ]
        for bytes in bad {
            #expect(!UTF8StreamValidator.isValid(bytes), "\(bytes)")
        }
    }

    @Test func carriesStateAcrossPieces() {
        let bytes = Array("aé緊🙂z".utf8)
        for split in 0...bytes.count {
            var validator = UTF8StreamValidator()
            let first = validator.feed(bytes[..<split])
            let second = validator.feed(bytes[split...])
            #expect(first && second && validator.isAtBoundary)
        }
        var partial = UTF8StreamValidator()
        let accepted = partial.feed([0xF0, 0x9F])
        #expect(accepted)
        #expect(!partial.isAtBoundary)
    }

    @Test func failsAtTheFirstInvalidByte() {
        var validator = UTF8StreamValidator()
        let prefix = validator.feed(Array("valid so far ".utf8))
        let surrogate = validator.feed([0xCE, 0xBA, 0xE1, 0xBD, 0xB9, 0xCF, 0x83, 0xCE, 0xBC, 0xCE, 0xB5, 0xED, 0xA0, 0x80])
        #expect(prefix && !surrogate)
    }
}
