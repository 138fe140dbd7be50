import Foundation
import Testing

/// The README's commands, as a new user copies them: nothing in them may collide with
/// the demo server the quick start leaves running on 7070.
@Suite("README recipes")
struct ReadmeRecipeTests {
    static func readme() throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
    }

    /// The lines of every ```sh block.
    static func shellLines(_ text: String) -> [String] {
        var lines: [String] = []
        var inside = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") {
                inside = line == "```sh"
                continue
            }
            if inside { lines.append(String(line)) }
        }
        return lines
    }

    @Test func theQuickStartSaysTheServerKeepsRunning() throws {
        let text = try Self.readme()
        let quickStart = String(text.prefix(upTo: text.range(of: "## ")?.lowerBound ?? text.endIndex))
        #expect(quickStart.contains("keeps running"))
        #expect(quickStart.contains("another terminal"))
        let commands = Self.shellLines(quickStart)
        // The project's rule: the README opens with the server and the test command.
        #expect(commands.first?.hasPrefix("swift run -c release arbiter ") == true)
        #expect(commands.first?.contains("terminal 1") == true)
        #expect(commands.dropFirst().first?.hasPrefix("swift test ") == true)
        #expect(commands.dropFirst().first?.contains("terminal 2") == true)
    }

    @Test func noRecipeStartsASecondServerOnTheDemosPort() throws {
        let servers = Self.shellLines(try Self.readme()).filter { $0.contains("arbiter ") && $0.contains(" &") && !$0.contains("arbiter-load") }
        #expect(!servers.isEmpty)
        for line in servers {
            let words = line.split(separator: " ")
            let port = words.firstIndex(of: "--port").flatMap { words.indices.contains($0 + 1) ? String(words[$0 + 1]) : nil }
            #expect(port != nil && port != "7070", "\(line)")
            // Its load generator must be pointed at the same port.
            if let port {
                #expect(
                    Self.shellLines(try Self.readme()).contains { $0.contains("arbiter-load ") && !$0.contains(" config ") && $0.contains("--port \(port)") })
            }
        }
    }
}
