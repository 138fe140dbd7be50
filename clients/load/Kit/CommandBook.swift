/// The bytes of every command the generator sends, built once per run so that the hot
/// loop only appends bytes and, for UP, the fence's digits.
struct CommandBook: Sendable {
    let lineDown: [[UInt8]]
    let lineUpPrefix: [[UInt8]]
    let jsonDown: [[UInt8]]
    let jsonUpPrefix: [[UInt8]]
    let lineJoin: [UInt8]
    let jsonJoin: [UInt8]
    let redisSetPrefix: [[UInt8]]
    let redisSetTail: [UInt8]
    let redisDel: [[UInt8]]
    let redisPublishPrefix: [UInt8]
    let redisSubscribe: [UInt8]
    let redisPing: [UInt8]
    /// The text of a published message after its id: the size of a PRESSED line.
    let publishBody: [UInt8]

    init(panel: String, buttons: [String], lockTTLms: Int) {
        lineDown = buttons.map { Array("DOWN \(panel) \($0)\n".utf8) }
        lineUpPrefix = buttons.map { Array("UP \(panel) \($0) fence=".utf8) }
        jsonDown = buttons.map { Array(#"{"cmd":"down","panel":"\#(panel)","button":"\#($0)"}"#.utf8) }
        jsonUpPrefix = buttons.map { Array(#"{"cmd":"up","panel":"\#(panel)","button":"\#($0)","fence":"#.utf8) }
        lineJoin = Array("JOIN \(panel)\n".utf8)
        jsonJoin = Array(#"{"cmd":"join","panel":"\#(panel)"}"#.utf8)
        redisSetPrefix = buttons.map { b in
            var out: [UInt8] = Array("*6\r\n$3\r\nSET\r\n".utf8)
            CommandBook.bulk("lock:\(panel):\(b)", into: &out)
            return out
        }
        var tail: [UInt8] = []
        for word in ["NX", "PX", String(lockTTLms)] { CommandBook.bulk(word, into: &tail) }
        redisSetTail = tail
        redisDel = buttons.map { RESPCommand.encode(["DEL", "lock:\(panel):\($0)"]) }
        var publish: [UInt8] = Array("*3\r\n$7\r\nPUBLISH\r\n".utf8)
        CommandBook.bulk("panel:\(panel)", into: &publish)
        redisPublishPrefix = publish
        redisSubscribe = RESPCommand.encode(["SUBSCRIBE", "panel:\(panel)"])
        redisPing = RESPCommand.encode(["PING"])
        publishBody = Array(" PRESSED \(panel) \(buttons.first ?? "b1") owner=c0 session=s1 fence=0 seq=0".utf8)
    }

    static func bulk(_ text: String, into out: inout [UInt8]) {
        let bytes = Array(text.utf8)
        out.append(UInt8(ascii: "$"))
        out.append(contentsOf: String(bytes.count).utf8)
        out.append(contentsOf: [0x0D, 0x0A])
        out.append(contentsOf: bytes)
        out.append(contentsOf: [0x0D, 0x0A])
    }

    /// Appends a non-negative integer's decimal digits.
    @inline(__always)
    static func appendDecimal(_ value: Int64, to out: inout [UInt8]) {
        var v = UInt64(max(0, value))
        var digits:
            (
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8
            ) =
                (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var n = 0
        withUnsafeMutableBytes(of: &digits) { raw in
            repeat {
                raw[n] = UInt8(truncatingIfNeeded: v % 10) + 0x30
                v /= 10
                n += 1
            } while v > 0
            while n > 0 {
                n -= 1
                out.append(raw[n])
            }
        }
    }
}
