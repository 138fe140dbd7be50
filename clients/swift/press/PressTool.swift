import ArbiterClient
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
        var arguments = Array(CommandLine.arguments.dropFirst())
        var hosts: [String] = []
        var name = "press-\(ProcessInfo.processInfo.processIdentifier)"
        var key: String?
        var hold = false
        var seconds: Double?
        var positional: [String] = []
        while !arguments.isEmpty {
            let argument = arguments.removeFirst()
            func value() -> String {
                guard !arguments.isEmpty else { fail("\(argument) needs a value\n\(usage)") }
                return arguments.removeFirst()
            }
            switch argument {
            case "--hold": hold = true
            case "--for":
                guard let s = Double(value()), s >= 0 else { fail("--for needs a number of seconds") }
                seconds = s
            case "--host": hosts.append(value())
            case "--name": name = value()
            case "--key": key = value()
            case "-h", "--help":
                say(usage)
                exit(0)
            default:
                if argument.hasPrefix("-") { fail("unknown option \(argument)\n\(usage)") }
                positional.append(argument)
            }
        }
        guard positional.count == 2 else { fail(usage) }
        do {
            exit(try await press(panel: positional[0], button: positional[1], hold: hold, seconds: seconds, hosts: hosts, name: name, key: key))
        } catch {
            fail("\(error)")
        }
    }

    static func press(panel id: String, button: String, hold: Bool, seconds: Double?, hosts: [String], name: String, key: String?) async throws
        -> Int32
    {
        let client = try await ArbiterClient.connect(hosts: hosts.isEmpty ? ["127.0.0.1:7070"] : hosts, name: name, key: key)
        let panel = try await client.join(id)
        let kind = panel.state[button: button]?.kind ?? "unknown"
        // Subscribed before the press, so that none of its events is missed.
        let events = panel.events
        let result = try await panel.down(button)
        say("\(id) \(button) (\(kind)): \(result)")
        guard case .granted(let fence) = result else { return 1 }
        guard hold else {
            say("up: \(try await panel.up(button))")
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
        if !ownRelease { say("up: \(try await panel.up(button))") }
        guard kind == "hold" else { return 0 }
        say(fired ? "the hold fired" : "the hold did not fire")
        return fired ? 0 : 3
    }

    /// Unbuffered, so that lines keep their order with the progress bar's and reach a pipe
    /// at once.
    static func say(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("arbiter-press: \(message)\n".utf8))
        exit(2)
    }
}
