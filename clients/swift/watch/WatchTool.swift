import ArbiterClient
import ArbiterClientTool
import Foundation

/// `arbiter-watch <panel>`: the panel's state, then every event as it comes, with the
/// state again after each change of owner; it reconnects by itself like any client.
@main
struct WatchTool {
    static let usage = """
        usage: arbiter-watch <panel> [--once] [--host <host:port>]... [--name <name>] [--key <key>]
          --once   print the state and exit
          --host   a server or cluster node (repeat for several; default 127.0.0.1:7070)
        """

    static func main() async {
        var once = false
        let line = ToolCommandLine.orExit(program: "arbiter-watch", usage: usage, positional: 1) { flag, _ in
            guard flag == "--once" else { return false }
            once = true
            return true
        }
        do {
            let client = try await ArbiterClient.connect(hosts: line.servers, name: line.name, key: line.key)
            let panel = try await client.join(line.positional[0])
            let events = panel.events
            line.say(table(panel.state))
            if once { return }
            for await event in events {
                line.say("\(clock()) \(event)")
                switch event {
                case .pressed, .released, .resynced, .endedWhileAway: line.say("        \(summary(panel.state))")
                case .removed: return
                default: continue
                }
            }
        } catch {
            line.fail("\(error)")
        }
    }

    static func table(_ state: PanelState) -> String {
        var lines = ["panel \(state.panel): members=\(state.members) fence=\(state.fence) seq=\(state.seq)" + (state.term.map { " term=\($0)" } ?? "")]
        for button in state.buttons {
            let owner = button.owner.map { " owner=\($0)" } ?? ""
            lines.append("  \(button.id)  kind=\(button.kind) group=\(button.group) \(button.phase)\(owner)")
        }
        for waiting in state.waiting { lines.append("  waiting \(waiting.button) #\(waiting.position) \(waiting.name)") }
        for round in state.rounds { lines.append("  round \(round.group) \(round.state) ranks=\(round.ranks.count)") }
        return lines.joined(separator: "\n")
    }

    /// One line: each button and who has it.
    static func summary(_ state: PanelState) -> String {
        state.buttons.map { button in
            switch button.phase {
            case .idle: "\(button.id)=idle"
            case .pressed: "\(button.id)=\(button.owner ?? "?")"
            case .locked: "\(button.id)=locked"
            case .other(let text): "\(button.id)=\(text)"
            }
        }.joined(separator: " ")
    }

    static func clock() -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = "HH:mm:ss.SSS"
        return formatter.string(from: Date())
    }
}
