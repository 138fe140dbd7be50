import ArbiterCore
import ArbiterIO

/// The names open sessions go by, and from which client address. A name in use from
/// another address is marked when taken again (`alice` becomes `alice-2`), so no other
/// device can pass for alice by her name alone. The same address may use a name more
/// than once: a kiosk page that is reloaded, or opened twice, connects again while the
/// browser may keep the old WebSocket open for a while, and must stay `alice`. Events
/// also carry the session, which tells every two sessions apart.
final class NameRegistry: Sendable {
    private struct Holders {
        var address: String
        var sessions: Set<SessionID>
    }

    private let owners = Locked<[String: Holders]>([:])

    /// Gives `session` (from `address`) the name `wanted`, or its first free mark, and
    /// frees `previous`. Returns the name given.
    func claim(_ wanted: String, for session: SessionID, from address: String, replacing previous: String?) -> String {
        owners.withLock { owners in
            if let previous, previous != wanted { NameRegistry.remove(session, from: previous, in: &owners) }
            var name = wanted
            var n = 2
            while let holders = owners[name], holders.address != address, !holders.sessions.contains(session), n < 100_000 {
                name = NameRegistry.marked(wanted, n)
                n += 1
            }
            owners[name, default: Holders(address: address, sessions: [])].sessions.insert(session)
            return name
        }
    }

    /// The session is gone: its name is free again once no session of its address
    /// uses it.
    func release(_ name: String, of session: SessionID) {
        owners.withLock { NameRegistry.remove(session, from: name, in: &$0) }
    }

    private static func remove(_ session: SessionID, from name: String, in owners: inout [String: Holders]) {
        guard var holders = owners[name], holders.sessions.remove(session) != nil else { return }
        owners[name] = holders.sessions.isEmpty ? nil : holders
    }

    /// `base-n`, the base shortened so that the result stays a valid name
    /// (`[A-Za-z0-9_.-]{1,32}`, ASCII).
    static func marked(_ base: String, _ n: Int) -> String {
        let suffix = "-\(n)"
        return String(decoding: base.utf8.prefix(32 - suffix.utf8.count), as: UTF8.self) + suffix
    }
}
