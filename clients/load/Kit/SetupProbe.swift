import ArbiterIO
import Glibc

/// The first connection of a run, set up synchronously before the engines start: it
/// JOINs the panel, and its snapshot tells the generator the buttons and their groups.
/// It then stays on as the first observer.
struct SetupProbe {
    let fd: Int32
    /// Every line read up to and including `OK JOIN`, without their newlines.
    let lines: [[UInt8]]
    /// Bytes read after the `OK JOIN` line (the first events).
    let leftover: [UInt8]
    let buttons: [SnapshotButton]

    static func join(host: String, port: UInt16, panel: String, name: String, timeoutMs: Int32 = 5000) throws(LoadError) -> SetupProbe {
        let fd: Int32
        switch Sys.connect(host: host, port: port) {
        case .success(let s): fd = s
        case .failure(let e): throw LoadError("cannot connect to \(HostLiteral.authority(host, port: port)): \(e.reason)")
        }
        do {
            return try converse(fd: fd, host: host, port: port, panel: panel, name: name, timeoutMs: timeoutMs)
        } catch {
            Sys.close(fd)
            throw error
        }
    }

    private static func converse(fd: Int32, host: String, port: UInt16, panel: String, name: String, timeoutMs: Int32) throws(LoadError) -> SetupProbe {
        let at = HostLiteral.authority(host, port: port)
        try wait(fd, Int16(POLLOUT), timeoutMs, "connecting to \(at)")
        let err = Sys.pendingError(fd)
        guard err == 0 else { throw LoadError("cannot connect to \(at): \(Sys.Failure(call: "connect", errno: err).reason)") }
        let hello = Array("HELLO \(name)\nJOIN \(panel)\n".utf8)
        guard case .bytes(hello.count) = hello.withUnsafeBytes({ Sys.write(fd, $0) }) else {
            throw LoadError("cannot write to \(at)")
        }
        var buffer: [UInt8] = []
        var lines: [[UInt8]] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        // Bounded: a snapshot of at most 1000 buttons, read within the timeout per read.
        for _ in 0..<10_000 {
            try wait(fd, Int16(POLLIN), timeoutMs, "waiting for the JOIN snapshot of \(panel)")
            let result = chunk.withUnsafeMutableBytes { Sys.read(fd, into: $0) }
            switch result {
            case .bytes(let n): buffer += chunk[..<n]
            case .wouldBlock: continue
            case .eof: throw LoadError("\(at) closed the connection during setup")
            case .failed(let e): throw LoadError(Sys.Failure(call: "read", errno: e).description)
            }
            while let newline = buffer.firstIndex(of: 0x0A) {
                var line = Array(buffer[..<newline])
                if line.last == 0x0D { line.removeLast() }
                buffer.removeFirst(newline + 1)
                lines.append(line)
                let text = String(decoding: line, as: UTF8.self)
                if text.hasPrefix("ERROR no-such-panel") {
                    throw LoadError(
                        "the server has no panel '\(panel)'; start it with a load panel: arbiter-load config > load.json; arbiter --config load.json")
                }
                if text.hasPrefix("ERROR") { throw LoadError("JOIN \(panel) failed: \(text)") }
                if text.hasPrefix("OK JOIN") {
                    let buttons = lines.compactMap { $0.starts(with: Array("BUTTON ".utf8)) ? SnapshotButton.parse($0) : nil }
                    return SetupProbe(fd: fd, lines: lines, leftover: buffer, buttons: buttons)
                }
            }
        }
        throw LoadError("no JOIN reply from \(at)")
    }

    private static func wait(_ fd: Int32, _ events: Int16, _ timeoutMs: Int32, _ doing: String) throws(LoadError) {
        var p = pollfd(fd: fd, events: events, revents: 0)
        // Bounded: EINTR retries only.
        for _ in 0..<100 {
            let n = poll(&p, 1, timeoutMs)
            if n > 0 { return }
            if n == 0 { throw LoadError("timed out \(doing)") }
            if errno != EINTR { throw LoadError("poll failed \(doing)") }
        }
        throw LoadError("poll kept being interrupted \(doing)")
    }
}
