import ArbiterCore
import Testing
@testable import ArbiterWire

/// The fast path must agree with the general parser on every line it accepts.
@Suite("fast line parser agrees with the general one")
struct FastLineParserTests {
    func both(_ line: String) -> (fast: Request?, general: TextCommandParser.Outcome) {
        var copy = line
        return copy.withUTF8 { (FastLineParser.parse($0), TextCommandParser.parseGeneral($0)) }
    }

    @Test func commonCommands() {
        for line in [
            "DOWN demo b1", "down demo b1", "Up demo b1 fence=12", "CANCEL demo b1 FENCE=0", "JOIN demo",
            "leave demo", "PING", "  DOWN\tdemo   b1  ", "UP demo b1 fence=18446744073709551615",
        ] {
            let (fast, general) = both(line)
            #expect(fast != nil, "\(line) takes the fast path")
            #expect(general == .command(ParsedCommand(request: fast!, format: .text)), "\(line)")
        }
    }

    @Test func everythingElseFallsBack() {
        for line in [
            "DOWN demo", "DOWN demo b1 x", "UP demo b1 fence=", "UP demo b1 fence=-1", "UP demo b1 fence=1x",
            "UP demo b1 fence=18446744073709551616", "UP demo b1 fenc=1", "DOWN de.mo b1", "DOWN \"demo\" b1",
            "PING x", "HELLO alice", "DOWN demo b\u{e9}", "JOIN " + String(repeating: "a", count: 65),
        ] {
            #expect(both(line).fast == nil, "\(line) is left to the general parser")
        }
    }

    @Test func randomLinesAgree() {
        var rng = SystemRandomNumberGenerator()
        let words = [
            "DOWN", "down", "UP", "Up", "CANCEL", "JOIN", "LEAVE", "PING", "demo", "b1", "B-2", "x_y", "fence=3",
            "FENCE=12", "fence=", "=", "a=b", "\"q\"", "é", "", " ", "\t", "fence=99999999999999999999", "-",
            String(repeating: "z", count: 64), String(repeating: "z", count: 65),
        ]
        for _ in 0..<20_000 {
            let line = (0..<Int.random(in: 1...5, using: &rng)).map { _ in words.randomElement(using: &rng)! }.joined(separator: " ")
            let (fast, general) = both(line)
            if let fast {
                #expect(general == .command(ParsedCommand(request: fast, format: .text)), "\(line)")
            }
        }
    }
}
