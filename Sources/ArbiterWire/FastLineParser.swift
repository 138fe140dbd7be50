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
    private static let maxTokens = 4

    static func parse(_ line: UnsafeBufferPointer<UInt8>) -> Request? {
        // Token boundaries, at most four tokens.
        var starts = (0, 0, 0, 0)
        var ends = (0, 0, 0, 0)
        var count = 0
        var i = 0
        let n = line.count
        while i < n {
            let c = line[i]
            if c == 0x20 || c == 0x09 {
                i += 1
                continue
            }
            if count == maxTokens { return nil }
            let start = i
            while i < n {
                let b = line[i]
                if b == 0x20 || b == 0x09 { break }
                // Quotes, escapes and non-ASCII bytes take the general path.
                if b == 0x22 || b == 0x5C || b >= 0x80 || b < 0x20 { return nil }
                i += 1
            }
            withUnsafeMutableBytes(of: &starts) { $0.storeBytes(of: start, toByteOffset: count * 8, as: Int.self) }
            withUnsafeMutableBytes(of: &ends) { $0.storeBytes(of: i, toByteOffset: count * 8, as: Int.self) }
            count += 1
        }
        guard count > 0 else { return nil }
        func token(_ k: Int) -> UnsafeBufferPointer<UInt8> {
            let s = withUnsafeBytes(of: starts) { $0.load(fromByteOffset: k * 8, as: Int.self) }
            let e = withUnsafeBytes(of: ends) { $0.load(fromByteOffset: k * 8, as: Int.self) }
            return UnsafeBufferPointer(rebasing: line[s..<e])
        }
        func id(_ k: Int) -> String? {
            let t = token(k)
            guard Identifier.isValidID(bytes: t) else { return nil }
            return String(decoding: t, as: UTF8.self)
        }
        let verb = token(0)
        switch (Verb(verb), count) {
        case (.down, 3):
            guard let p = id(1), let b = id(2) else { return nil }
            return .down(panel: p, button: b)
        case (.up, 3), (.cancel, 3):
            guard let p = id(1), let b = id(2) else { return nil }
            return Verb(verb) == .up ? .up(panel: p, button: b, fence: nil) : .cancel(panel: p, button: b, fence: nil)
        case (.up, 4), (.cancel, 4):
            guard let p = id(1), let b = id(2), let fence = fenceOption(token(3)) else { return nil }
            return Verb(verb) == .up ? .up(panel: p, button: b, fence: fence) : .cancel(panel: p, button: b, fence: fence)
        case (.join, 2):
            guard let p = id(1) else { return nil }
            return .join(panel: p)
        case (.leave, 2):
            guard let p = id(1) else { return nil }
            return .leave(panel: p)
        case (.ping, 1):
            return .ping(token: nil)
        default:
            return nil
        }
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
