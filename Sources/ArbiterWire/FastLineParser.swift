import ArbiterCore

/// The press path's commands, decoded straight from the bytes.
///
/// Most lines a server sees are `DOWN demo b1`, `UP demo b1 fence=12` and the like: a
/// verb and plain tokens. Those are decoded here without tokenizing into arrays and
/// dictionaries (the general parser costs several times more per line). Anything else
/// — quotes, options other than `fence=`, errors of any kind — returns nil and goes to
/// `TextCommandParser`'s general path, which therefore decides every error message.
/// Tests check that both paths agree on every line the fast one accepts.
public enum FastLineParser {
    /// The press commands alone, their ids not even made into strings: the server
    /// looks them up in its tables directly. Nil for anything else, or anything unusual.
    /// Its panel and button are byte ranges of `line`.
    public static func scanPress(_ line: UnsafeBufferPointer<UInt8>) -> Press<UnsafeBufferPointer<UInt8>>? {
        // One pass, token by token, giving up at the first thing that is not a press.
        guard let base = line.baseAddress else { return nil }
        let n = line.count
        var i = 0
        @inline(__always) func next() -> Range<Int>? {
            while i < n, base[i] == 0x20 || base[i] == 0x09 { i += 1 }
            guard i < n else { return nil }
            let start = i
            while i < n {
                let b = base[i]
                if b == 0x20 || b == 0x09 { break }
                if b == 0x22 || b == 0x5C || b >= 0x80 || b < 0x20 { return start..<start }
                i += 1
            }
            return start..<i
        }
        guard let v = next(), !v.isEmpty else { return nil }
        guard let verb = Verb(caseInsensitive: UnsafeBufferPointer(start: base + v.lowerBound, count: v.count)), verb.isPress else {
            return nil
        }
        guard let p = next(), !p.isEmpty, let b = next(), !b.isEmpty else { return nil }
        var fence: UInt64?
        if let f = next() {
            guard verb != .down, !f.isEmpty, let value = fenceOption(UnsafeBufferPointer(start: base + f.lowerBound, count: f.count)),
                next() == nil
            else { return nil }
            fence = value
        }
        let panel = UnsafeBufferPointer(start: base + p.lowerBound, count: p.count)
        let button = UnsafeBufferPointer(start: base + b.lowerBound, count: b.count)
        guard Identifier.isValidID(bytes: panel), Identifier.isValidID(bytes: button) else { return nil }
        return Press(verb: verb, panel: panel, button: button, fence: fence)
    }

    private struct Tokens {
        var count = 0
        var s0 = 0, e0 = 0, s1 = 0, e1 = 0, s2 = 0, e2 = 0, s3 = 0, e3 = 0
    }

    /// Up to four plain ASCII tokens; nil if there are more, or quotes or other bytes
    /// the general parser must see.
    private static func tokens(_ line: UnsafeBufferPointer<UInt8>) -> Tokens? {
        var t = Tokens()
        var i = 0
        let n = line.count
        while i < n {
            let c = line[i]
            if c == 0x20 || c == 0x09 {
                i += 1
                continue
            }
            let start = i
            while i < n {
                let b = line[i]
                if b == 0x20 || b == 0x09 { break }
                if b == 0x22 || b == 0x5C || b >= 0x80 || b < 0x20 { return nil }
                i += 1
            }
            switch t.count {
            case 0: (t.s0, t.e0) = (start, i)
            case 1: (t.s1, t.e1) = (start, i)
            case 2: (t.s2, t.e2) = (start, i)
            case 3: (t.s3, t.e3) = (start, i)
            default: return nil
            }
            t.count += 1
        }
        return t.count > 0 ? t : nil
    }

    static func parse(_ line: UnsafeBufferPointer<UInt8>) -> Request? {
        guard let t = tokens(line) else { return nil }
        let verb = Verb(caseInsensitive: UnsafeBufferPointer(rebasing: line[t.s0..<t.e0]))
        switch (verb, t.count) {
        case (.ping, 1):
            return .ping(token: nil)
        case (.join, 2), (.leave, 2):
            guard let p = id(line, t.s1, t.e1) else { return nil }
            return verb == .join ? .join(panel: p) : .leave(panel: p)
        case (.down, 3), (.up, 3), (.cancel, 3), (.up, 4), (.cancel, 4):
            guard let press = scanPress(line) else { return nil }
            return .press(press.map { String(decoding: $0, as: UTF8.self) })
        default:
            return nil
        }
    }

    @inline(__always)
    private static func id(_ line: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> String? {
        let t = UnsafeBufferPointer(rebasing: line[start..<end])
        guard Identifier.isValidID(bytes: t) else { return nil }
        return String(decoding: t, as: UTF8.self)
    }

    /// `fence=<digits>` (key in any case) as a number; nil for anything else.
    private static func fenceOption(_ t: UnsafeBufferPointer<UInt8>) -> UInt64? {
        let key: [UInt8] = [0x66, 0x65, 0x6E, 0x63, 0x65, 0x3D]  // "fence="
        guard t.count > key.count, t.count <= key.count + 20 else { return nil }
        for k in 0..<key.count where (t[k] | (k < 5 ? 0x20 : 0)) != key[k] { return nil }
        var value: UInt64 = 0
        for k in key.count..<t.count {
            let d = t[k] &- 0x30
            guard d < 10 else { return nil }
            let (m, o1) = value.multipliedReportingOverflow(by: 10)
            let (a, o2) = m.addingReportingOverflow(UInt64(d))
            if o1 || o2 { return nil }
            value = a
        }
        return value
    }

}
