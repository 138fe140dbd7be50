import ArbiterCore

extension Verb {
    /// The verb a token spells in any case, or nil. Only for tokens of ASCII letters
    /// and digits (the fast parser's), where `| 0x20` lowercases a letter; the general
    /// parser goes through `CommandSyntax.byVerb` with the word uppercased.
    @inline(__always)
    init?(caseInsensitive t: UnsafeBufferPointer<UInt8>) {
        @inline(__always) func matches(_ word: StaticString) -> Bool {
            guard t.count == word.utf8CodeUnitCount else { return false }
            let w = word.utf8Start
            for k in 0..<t.count where t[k] | 0x20 != w[k] { return false }
            return true
        }
        // By length first, the press verbs first within a length: the press path
        // compares as few bytes as it did before the other verbs were listed here.
        switch t.count {
        case 2 where matches("up"): self = .up
        case 3 where matches("arm"): self = .arm
        case 4:
            if matches("down") {
                self = .down
            } else if matches("join") {
                self = .join
            } else if matches("ping") {
                self = .ping
            } else if matches("help") {
                self = .help
            } else if matches("quit") {
                self = .quit
            } else if matches("kick") {
                self = .kick
            } else {
                return nil
            }
        case 5:
            if matches("leave") { self = .leave } else if matches("hello") { self = .hello } else if matches("reset") { self = .reset } else { return nil }
        case 6:
            if matches("cancel") { self = .cancel } else if matches("panels") { self = .panels } else { return nil }
        case 7:
            if matches("history") { self = .history } else if matches("ranking") { self = .ranking } else { return nil }
        default: return nil
        }
    }
}
