import Testing
import ArbiterWire

@Suite struct SHA1Tests {
    private func hex(_ bytes: [UInt8]) -> String {
        bytes.map { byte in
            let digits = Array("0123456789abcdef")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
        }.joined()
    }

    @Test func rfc3174Vectors() {
        #expect(hex(SHA1.hash("abc".utf8)) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(hex(SHA1.hash("".utf8)) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        #expect(
            hex(SHA1.hash("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
    }

    @Test func oneMillionA() {
        var sha = SHA1()
        let block = [UInt8](repeating: UInt8(ascii: "a"), count: 1000)
        for _ in 0..<1000 { sha.update(block) }
        #expect(hex(sha.finalize()) == "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
    }

    @Test func streamingEqualsOneShotAtEveryPaddingBoundary() {
        // Lengths around 55/56/64 bytes exercise the one- and two-block padding paths.
        for length in [0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 128, 200] {
            let message = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
            let oneShot = SHA1.hash(message)
            var sha = SHA1()
            var index = 0
            var step = 1
            while index < message.count {
                let end = min(message.count, index + step)
                sha.update(message[index..<end])
                index = end
                step += 3
            }
            #expect(sha.finalize() == oneShot, "length \(length)")
        }
    }
}
