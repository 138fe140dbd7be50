import ArbiterCore

/// The press path's commands, decoded straight from the bytes.
///
/// Most lines a server sees are `DOWN demo b1`, `UP demo b1 fence=12` and the like: a
/// verb and plain tokens. Those are decoded here without tokenizing into arrays and
/// dictionaries (the general parser costs several times more per line). Anything else
/// — quotes, options other than `fence=`, errors of any kind — returns nil and goes to
/// `TextCommandParser`'s general path, which therefore decides every error message.
/// Tests check that both paths agree on every line the fast one accepts.
enum FastLineParser {
    static func parse(_ line: UnsafeBufferPointer<UInt8>) -> Request? {
        // Token boundaries in plain locals: at most four tokens.
        var s0 = 0, e0 = 0, s1 = 0, e1 = 0, s2 = 0, e2 = 0, s3 = 0, e3 = 0
        var count = 0
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
                // Quotes, escapes and non-ASCII bytes take the general path.
                if b == 0x22 || b == 0x5C || b >= 0x80 || b < 0x20 { return nil }
                i += 1
            }
            switch count {
            case 0: (s0, e0) = (start, i)
            case 1: (s1, e1) = (start, i)
            case 2: (s2, e2) = (start, i)
            case 3: (s3, e3) = (start, i)
            default: return nil
            }
            count += 1
        }
        guard count > 0 else { return nil }
        let verb = Verb(UnsafeBufferPointer(rebasing: line[s0..<e0]))
        switch (verb, count) {
        case (.ping, 1):
            return .ping(token: nil)
        case (.join, 2), (.leave, 2):
            guard let p = id(line, s1, e1) else { return nil }
            return verb == .join ? .join(panel: p) : .leave(panel: p)
        case (.down, 3):
            guard let p = id(line, s1, e1), let b = id(line, s2, e2) else { return nil }
            return .down(panel: p, button: b)
        case (.up, 3), (.cancel, 3), (.up, 4), (.cancel, 4):
            var fence: UInt64?
            if count == 4 {
                guard let f = fenceOption(UnsafeBufferPointer(rebasing: line[s3..<e3])) else { return nil }
                fence = f
            }
            guard let p = id(line, s1, e1), let b = id(line, s2, e2) else { return nil }
            return verb == .up ? .up(panel: p, button: b, fence: fence) : .cancel(panel: p, button: b, fence: fence)
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

    private enum Verb: Equatable {
        case down, up, cancel, join, leave, ping, other

        init(_ t: UnsafeBufferPointer<UInt8>) {
            // ASCII letters only reach here; | 0x20 lowercases them.
            func matches(_ word: StaticString) -> Bool {
                guard t.count == word.utf8CodeUnitCount else { return false }
                let w = word.utf8Start
                for k in 0..<t.count where t[k] | 0x20 != w[k] { return false }
                return true
            }
            switch t.count {
            case 2: self = matches("up") ? .up : .other
            case 4: self = matches("down") ? .down : matches("join") ? .join : matches("ping") ? .ping : .other
            case 5: self = matches("leave") ? .leave : .other
            case 6: self = matches("cancel") ? .cancel : .other
            default: self = .other
            }
        }
    }
}
