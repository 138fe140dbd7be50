import Testing
import ArbiterWire

@Suite struct SHA256Tests {
    private func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0xF)]] })
    }

    private func bytes(hex: String) -> [UInt8] {
        var out: [UInt8] = []
        var chars = Array(hex.utf8)[...]
        while chars.count >= 2 {
            out.append(UInt8(String(decoding: chars.prefix(2), as: UTF8.self), radix: 16) ?? 0)
            chars = chars.dropFirst(2)
        }
        return out
    }

    @Test func fips180Vectors() {
        #expect(hex(SHA256.hash("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(hex(SHA256.hash("".utf8)) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(
            hex(SHA256.hash("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(
            hex(SHA256.hash("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu".utf8))
                == "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1")
    }

    @Test func oneMillionA() {
        var sha = SHA256()
        let block = [UInt8](repeating: UInt8(ascii: "a"), count: 1000)
        for _ in 0..<1000 { sha.update(block) }
        #expect(hex(sha.finalize()) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func streamingEqualsOneShotAtEveryPaddingBoundary() {
        for length in [0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 128, 200] {
            let message = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
            let oneShot = SHA256.hash(message)
            var sha = SHA256()
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

    // RFC 4231 section 4, test cases 1-7 (case 5's truncated MAC compared on its prefix).
    @Test func rfc4231Vectors() {
        let cases: [(key: [UInt8], data: [UInt8], mac: String)] = [
            (
                Array(repeating: 0x0B, count: 20), Array("Hi There".utf8),
                "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
            ),
            (
                Array("Jefe".utf8), Array("what do ya want for nothing?".utf8),
                "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
            ),
            (
                Array(repeating: 0xAA, count: 20), Array(repeating: 0xDD, count: 50),
                "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"
            ),
            (
                bytes(hex: "0102030405060708090a0b0c0d0e0f10111213141516171819"), Array(repeating: 0xCD, count: 50),
                "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"
            ),
            (
                Array(repeating: 0xAA, count: 131), Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
                "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
            ),
            (
                Array(repeating: 0xAA, count: 131),
                Array(
                    "This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm."
                        .utf8),
                "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"
            ),
        ]
        for (index, vector) in cases.enumerated() {
            #expect(hex(HMACSHA256.mac(key: vector.key, message: vector.data)) == vector.mac, "case \(index)")
        }
        let truncated = HMACSHA256.mac(key: Array(repeating: 0x0C, count: 20), message: Array("Test With Truncation".utf8))
        #expect(hex(Array(truncated.prefix(16))) == "a3b6167473100ee06e0c796c2955552b")
    }

    @Test func hmacStreamingEqualsOneShot() {
        let key = Array("cluster key".utf8)
        let message = (0..<300).map { UInt8(truncatingIfNeeded: $0) }
        var hmac = HMACSHA256(key: key)
        hmac.update(message[..<17])
        hmac.update(message[17...])
        #expect(hmac.finalize() == HMACSHA256.mac(key: key, message: message))
    }
}
