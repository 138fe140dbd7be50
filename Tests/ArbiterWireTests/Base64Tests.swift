import Testing
import ArbiterWire

@Suite struct Base64Tests {
    static let vectors: [(String, String)] = [
        ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"),
        ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy"),
    ]

    @Test func rfc4648Vectors() {
        for (plain, encoded) in Self.vectors {
            #expect(Base64.encode(Array(plain.utf8)) == encoded)
            #expect(Base64.decode(encoded) == Array(plain.utf8))
        }
    }

    @Test func roundTripsEveryByteValue() {
        let bytes = (0...255).map { UInt8($0) }
        for length in [0, 1, 2, 3, 16, 100, 256] {
            let slice = Array(bytes.prefix(length))
            #expect(Base64.decode(Base64.encode(slice)) == slice)
        }
        #expect(Base64.encode([0xFB, 0xFF]) == "+/8=")
    }

    @Test func decodingIsStrict() {
        for bad in [
            "Zg=", "Zg", "Zh==", "Zm9=", "Z===", "====", "Zm=v", "Zg==Zg==", "Zm9v\n",
            " Zm9v", "Zm9v-_==", "Zm9v*A==", "Zm9vYg=\u{00}",
        ] {
            #expect(Base64.decode(bad) == nil, "\(bad.debugDescription) must be refused")
        }
    }

    @Test func sixteenByteWebSocketKey() {
        #expect(Base64.decode("dGhlIHNhbXBsZSBub25jZQ==")?.count == 16)
        #expect(Base64.decode("dGhlIHNhbXBsZSBub25jZQ==") == Array("the sample nonce".utf8))
    }
}
