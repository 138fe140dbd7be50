import Dispatch

/// A connection to a ButtonArbiter server (or cluster) that stays up by itself.
///
/// ```swift
/// let client = try await ArbiterClient.connect(hosts: ["127.0.0.1:7070"], name: "kiosk-1")
/// let panel = try await client.join("demo")
/// Task { for await event in panel.events { print(event) } }
/// let result = try await panel.down("sos")
/// try await panel.up("sos")
/// ```
///
/// It speaks the line protocol over TCP, in its JSON form. A quiet link is PINGed and a
/// silent one dropped within `ArbiterClientOptions.deadAfter`; a dropped one is made again,
/// with backoff and jitter, on the next host, and every joined panel is joined again and
/// reported `resynced`. Safe to use from any task. `close()` it when done (or let it go:
/// its deinit closes it).
public final class ArbiterClient: Sendable {
    let core: ClientCore

    private init(core: ClientCore) {
        self.core = core
    }

    deinit {
        core.close()
    }

    /// Connects to the first of `hosts` (`"host:port"`, `"[::1]:7070"`, or a host for port
    /// 7070) that answers, as `name`, presenting `key` if given. Each host is tried once;
    /// later losses are made good by the client itself.
    public static func connect(
        hosts: [String], name: String, key: String? = nil, options: ArbiterClientOptions = ArbiterClientOptions()
    ) async throws -> ArbiterClient {
        var addresses: [HostAddress] = []
        for host in hosts {
            guard let address = HostAddress(host) else { throw ArbiterClientError.unreachable("\(host): not host:port") }
            addresses.append(address)
        }
        guard !addresses.isEmpty else { throw ArbiterClientError.unreachable("no hosts given") }
        return ArbiterClient(core: try await ClientCore.connect(hosts: addresses, name: name, key: key, options: options))
    }

    /// Joins `panel` and returns it with its snapshot in `state`. Joining a panel again
    /// returns it as it is.
    public func join(_ panel: String) async throws -> ArbiterPanel {
        _ = try await core.join(panel)
        return ArbiterPanel(id: panel, client: self)
    }

    /// The name the server gave this client (`alice-2` when `alice` was taken from another
    /// address).
    public var name: String {
        core.locked { core.s.name }
    }

    /// This connection's session, nil while there is none.
    public var session: String? {
        core.locked { core.s.link?.session }
    }

    /// The host of the current connection, nil while reconnecting.
    public var host: String? {
        core.locked { core.s.link?.ready == true ? core.s.link?.link.host.description : nil }
    }

    /// Round trip to the server.
    public func ping() async throws {
        let reply = try await core.perform(Command("ping"))
        if reply.isError { throw reply.serverError }
    }

    /// Drops the connection and every panel: their streams end, and commands under way
    /// throw `ArbiterClientError.closed`.
    public func close() {
        core.close()
    }
}
