/// HMAC-SHA256 (RFC 2104, vectors from RFC 4231): the relay handshake's proof that both
/// nodes know `--cluster-key` without either sending it.
public struct HMACSHA256: Sendable {
    public static let macBytes = SHA256.digestBytes

    private var inner: SHA256
    private let outerKey: [UInt8]

    public init(key: some Sequence<UInt8>) {
        var block = Array(key)
        if block.count > SHA256.blockBytes { block = SHA256.hash(block) }
        block.append(contentsOf: repeatElement(0, count: SHA256.blockBytes - block.count))
        inner = SHA256()
        inner.update(block.map { $0 ^ 0x36 })
        outerKey = block.map { $0 ^ 0x5C }
    }

    public static func mac(key: some Sequence<UInt8>, message: some Sequence<UInt8>) -> [UInt8] {
        var hmac = HMACSHA256(key: key)
        hmac.update(message)
        return hmac.finalize()
    }

    public mutating func update(_ bytes: some Sequence<UInt8>) {
        inner.update(bytes)
    }

    public consuming func finalize() -> [UInt8] {
        var outer = SHA256()
        outer.update(outerKey)
        outer.update(inner.finalize())
        return outer.finalize()
    }
}
