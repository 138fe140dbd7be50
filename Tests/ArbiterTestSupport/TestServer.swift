import ArbiterCore
import ArbiterIO
import ArbiterServer

/// A real server on 127.0.0.1 and a free port, stopped when the test is done.
public final class TestServer: @unchecked Sendable {
    public let server: ArbiterServer
    public let port: UInt16
    /// What the server logged (`LogCapture`), instead of standard error.
    public let log = LogCapture()

    /// `clock`: a manual one lets a test move time past a lockout or a timer instead of
    /// waiting it out.
    public init(
        panels: [PanelConfig] = [.demo], clock: any TimeSource = SystemClock.monotonic, configure: (inout ServerConfiguration) -> Void = { _ in }
    ) throws {
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.panels = panels
        configuration.logLevel = .warning
        configuration.logSink = log.sink()
        configure(&configuration)
        server = ArbiterServer(configuration: configuration, clock: clock)
        port = try server.start()
    }

    deinit { server.stop() }

    /// A connected line client past its WELCOME line. It speaks first, so the
    /// server knows at once it is a line peer instead of waiting 200 ms.
    public func client(name: String? = nil) throws -> LineClient {
        let client = try LineClient(port: port)
        if let name {
            client.send("HELLO \(name)")
            _ = try client.expect("WELCOME")
            _ = try client.expect("OK HELLO")
        } else {
            client.send("PING hello")
            _ = try client.expect("WELCOME")
            _ = try client.expect("PONG hello")
        }
        return client
    }

    /// A client that has joined `panel` and read through its own JOINED.
    public func member(_ name: String, panel: String = "demo") throws -> LineClient {
        let client = try self.client(name: name)
        client.send("JOIN \(panel)")
        _ = try client.expect("JOINED \(panel) name=\(name)")
        return client
    }
}

/// `key=value` fields of a line.
public func field(_ key: String, of line: String) -> String? {
    for token in line.split(separator: " ") where token.hasPrefix(key + "=") {
        return String(token.dropFirst(key.count + 1))
    }
    return nil
}
