import ArbiterClient
import ArbiterClientTool
import Foundation

/// `arbiter-press <panel> <button> [--hold]`: one press through the client library. A tap
/// is pressed and released; with `--hold` the button stays down until the server ends the
/// grant (a hold fires, a tap times out), `--for` seconds pass, or Ctrl-C, showing a
/// hold's progress and saying whether it fired.
@main
struct PressTool {
    static let usage = """
        usage: arbiter-press <panel> <button> [--hold] [--for <seconds>] [--host <host:port>]... [--name <name>] [--key <key>]
          --hold      keep the button down until the server ends the grant, --for passes, or Ctrl-C
          --for <s>   with --hold: lift the finger after this many seconds
          --host      a server or cluster node (repeat for several; default 127.0.0.1:7070)
        exit status: 0 granted (with --hold on a hold button: and it fired), 1 not granted,
        3 held but did not fire, 2 an error
        """

    static func main() async {
        var hold = false
        var seconds: Double?
        let line = ToolCommandLine.orExit(program: "arbiter-press", usage: usage, positional: 2) { flag, value throws(ToolCommandLine.UsageError) in
            switch flag {
            case "--hold": hold = true
            case "--for":
                guard let s = Double(try value()), s >= 0 else { throw ToolCommandLine.UsageError(message: "--for needs a number of seconds") }
                seconds = s
            default: return false
            }
            return true
        }
        do {
            exit(try await press(panel: line.positional[0], button: line.positional[1], hold: hold, seconds: seconds, line: line))
        } catch {
            line.fail("\(error)")
        }
    }

    static func press(panel id: String, button: String, hold: Bool, seconds: Double?, line: ToolCommandLine) async throws
        -> Int32
    {
        let client = try await ArbiterClient.connect(hosts: line.servers, name: line.name, key: line.key)
        let panel = try await client.join(id)
        let kind = panel.state[button: button]?.kind ?? "unknown"
        // Subscribed before the press, so that none of its events is missed.
        let events = panel.events
        let result = try await panel.down(button)
        line.say("\(id) \(button) (\(kind)): \(result)")
        guard case .granted(let fence) = result else { return 1 }
        guard hold else {
            line.say("up: \(try await panel.up(button))")
            return 0
        }
        let lift: @Sendable () -> Void = { Task { _ = try? await panel.up(button) } }
        signal(SIGINT, SIG_IGN)
        let interrupt = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        interrupt.setEventHandler(handler: lift)
        interrupt.resume()
        if let seconds { DispatchQueue.global().asyncAfter(deadline: .now() + seconds, execute: lift) }
        let bar = ProgressBar()
        var fired = false
        var ownRelease = false
        loop: for await event in events {
            switch event {
            case .progress(button, let value, _):
                bar.show(value)
            case .midway(button, _):
                bar.note("midway")
            case .fired(button, _, _, fence, _):
                fired = true
                bar.note("FIRED fence=\(fence)")
            case .started(button, _, _, fence, _), .tapped(button, _, _, fence, _), .cancelled(button, _, _, fence, _),
                .stopped(button, _, _, fence, _, _, _, _):
                bar.note("\(event)")
            case .released(button, let reason, _, fence, _):
                bar.note("released reason=\(reason)")
                ownRelease = reason == "up"
                break loop
            case .endedWhileAway(button, fence, let reason):
                bar.note("ended while the connection was down (reason \(reason ?? "unknown"))")
                break loop
            case .disconnected, .resynced:
                bar.note("\(event)")
            default:
                continue
            }
        }
        interrupt.cancel()
        // Lifted by Ctrl-C or --for, the UP was already sent; else the finger lifts now.
        if !ownRelease { line.say("up: \(try await panel.up(button))") }
        guard kind == "hold" else { return 0 }
        line.say(fired ? "the hold fired" : "the hold did not fire")
        return fired ? 0 : 3
    }
}
