import Testing

@testable import ArbiterWire

/// `Bytes.appendDecimal` writes every number the way `String(_:)` does: it writes every
/// fence, seq and session number on the wire.
@Suite struct DecimalTests {
    static func decimal(_ value: UInt64) -> String {
        var out: [UInt8] = Array("x".utf8)
        Bytes.appendDecimal(value, to: &out)
        return String(decoding: out.dropFirst(), as: UTF8.self)
    }

    @Test func everySmallNumber() {
        for value in UInt64(0)...10_000 where Self.decimal(value) != String(value) {
            Issue.record("\(value) written as \(Self.decimal(value))")
        }
    }

    @Test func theEdgesOfEachLength() {
        var power: UInt64 = 1
        for _ in 0..<19 {
            power *= 10
            for value in [power - 1, power, power + 1] { #expect(Self.decimal(value) == String(value)) }
        }
        #expect(Self.decimal(.max) == "18446744073709551615")
        #expect(Self.decimal(.max - 1) == "18446744073709551614")
    }

    @Test func randomNumbers() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<10_000 {
            let value = UInt64.random(in: 0...UInt64.max, using: &generator) >> UInt64.random(in: 0...63, using: &generator)
            #expect(Self.decimal(value) == String(value))
        }
    }

    @Test func negativeNumbers() {
        var out: [UInt8] = []
        Bytes.appendDecimal(Int64.min, to: &out)
        #expect(String(decoding: out, as: UTF8.self) == String(Int64.min))
    }
}
