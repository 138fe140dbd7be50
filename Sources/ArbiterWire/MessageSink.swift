/// Where one server message is written, field by field.
///
/// Every message is described once, generically, and written by either the text sink
/// or the JSON sink; that is how the JSON form stays a one-to-one mapping of the text
/// form (PROTOCOL.md section 3) without a second description to keep in step.
protocol MessageSink {
    init()
    /// The bytes written so far.
    var out: [UInt8] { get set }
    /// `VERB` in text, `{"type":"verb"` in JSON.
    mutating func begin(_ verb: StaticString, _ type: StaticString)
    /// `OK VERB` in text, `{"type":"ok","re":"verb"` in JSON.
    mutating func beginOK(_ verb: StaticString, _ re: StaticString)
    /// `OK VERB` for a verb only known at run time.
    mutating func beginOK(verb: String)
    /// A positional argument: `value` in text, `"name":"value"` in JSON.
    mutating func arg(_ name: StaticString, _ value: String)
    mutating func string(_ name: StaticString, _ value: String)
    /// A string that text always quotes (`title="Demo"`).
    mutating func quoted(_ name: StaticString, _ value: String)
    /// A name that may be absent (a free button's owner): `-` in text, `null` in JSON.
    mutating func optionalName(_ name: StaticString, _ value: String?)
    mutating func int(_ name: StaticString, _ value: Int64)
    /// Fences and seqs are unsigned and may exceed Int64.max.
    mutating func unsigned(_ name: StaticString, _ value: UInt64)
    mutating func bool(_ name: StaticString, _ value: Bool)
    /// A value 0.000...1.000 given in thousandths; a JSON number with three decimals.
    mutating func decimal(_ name: StaticString, permille: Int)
    /// Free text to the end of the line in text (`ERROR code message`); a field in JSON.
    mutating func rest(_ name: StaticString, _ value: String)
    mutating func end(id: CommandID?)
    /// Fields whose names are only known at run time (journal records).
    mutating func dynamicString(_ name: String, _ value: String)
    mutating func dynamicInt(_ name: String, _ value: Int64)
    mutating func dynamicUnsigned(_ name: String, _ value: UInt64)
    mutating func dynamicBool(_ name: String, _ value: Bool)
}

extension MessageSink {
    mutating func int(_ name: StaticString, _ value: UInt64) { unsigned(name, value) }
    mutating func int(_ name: StaticString, _ value: Int) { int(name, Int64(value)) }
}

/// A sink that writes bytes, which both forms do alike but for how a key is written:
/// numbers and booleans are written here once for both.
protocol ByteSink: MessageSink {
    /// ` name=` in text, `,"name":` in JSON.
    mutating func key(_ name: StaticString)
    mutating func dynamicKey(_ name: String)
}

extension ByteSink {
    mutating func int(_ name: StaticString, _ value: Int64) {
        key(name)
        Bytes.appendDecimal(value, to: &out)
    }

    mutating func unsigned(_ name: StaticString, _ value: UInt64) {
        key(name)
        Bytes.appendDecimal(value, to: &out)
    }

    mutating func bool(_ name: StaticString, _ value: Bool) {
        key(name)
        Bytes.append(value ? "true" : "false", to: &out)
    }

    mutating func decimal(_ name: StaticString, permille: Int) {
        key(name)
        Bytes.appendPermille(permille, to: &out)
    }

    mutating func dynamicInt(_ name: String, _ value: Int64) {
        dynamicKey(name)
        Bytes.appendDecimal(value, to: &out)
    }

    mutating func dynamicUnsigned(_ name: String, _ value: UInt64) {
        dynamicKey(name)
        Bytes.appendDecimal(value, to: &out)
    }

    mutating func dynamicBool(_ name: String, _ value: Bool) {
        dynamicKey(name)
        Bytes.append(value ? "true" : "false", to: &out)
    }
}

/// Byte helpers shared by both sinks (and the relay's payloads, in ArbiterServer).
package enum Bytes {
    @inline(__always)
    static func append(_ s: StaticString, to out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount))
    }

    static func appendDecimal(_ value: Int64, to out: inout [UInt8]) {
        if value < 0 {
            out.append(UInt8(ascii: "-"))
            appendDecimal(UInt64(value.magnitude), to: &out)
        } else {
            appendDecimal(UInt64(value), to: &out)
        }
    }

    package static func appendDecimal(_ value: UInt64, to out: inout [UInt8]) {
        if value < 10 {
            out.append(UInt8(truncatingIfNeeded: value) + 0x30)
            return
        }
        // Two digits per division, written from the end of a local buffer, then one
        // append: in cluster mode every event carries 16-digit session numbers and large
        // fences, and a byte-by-byte append cost a leader's node about 570 instructions
        // per lock cycle (callgrind, 8 connections).
        var buffer: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &buffer) { raw in
            let d = raw.bindMemory(to: UInt8.self)
            var i = d.count
            var v = value
            while v >= 10 {
                let pair = Int(truncatingIfNeeded: v % 100)
                v /= 100
                i -= 2
                d[i] = UInt8(truncatingIfNeeded: pair / 10) &+ 0x30
                d[i + 1] = UInt8(truncatingIfNeeded: pair % 10) &+ 0x30
            }
            // With an odd number of digits, the first is left over.
            if v > 0 {
                i -= 1
                d[i] = UInt8(truncatingIfNeeded: v) + 0x30
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: d[i...]))
        }
    }

    /// `0.500` from 500.
    static func appendPermille(_ permille: Int, to out: inout [UInt8]) {
        let p = min(max(permille, 0), 1000)
        out.append(UInt8(p / 1000) + 0x30)
        out.append(UInt8(ascii: "."))
        out.append(UInt8(p / 100 % 10) + 0x30)
        out.append(UInt8(p / 10 % 10) + 0x30)
        out.append(UInt8(p % 10) + 0x30)
    }
}
