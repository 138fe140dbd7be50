import ArbiterCore

/// The names open sessions go by. A name already in use is marked when taken again
/// (`alice` becomes `alice-2`), so no session can pass for another by its name alone;
/// events also carry the session, which tells them apart for good.
final class NameRegistry: Sendable {
    private let owners = Locked<[String: SessionID]>([:])

    /// Gives `session` the name `wanted`, or its first free mark, and frees `previous`.
    /// Returns the name given.
    func claim(_ wanted: String, for session: SessionID, replacing previous: String?) -> String {
        owners.withLock { owners in
            if let previous, previous != wanted, owners[previous] == session { owners[previous] = nil }
            var name = wanted
            var n = 2
            while let holder = owners[name], holder != session, n < 100_000 {
                name = NameRegistry.marked(wanted, n)
                n += 1
            }
            owners[name] = session
            return name
        }
    }

    /// The session is gone: its name is free again.
    func release(_ name: String, of session: SessionID) {
        owners.withLock { owners in
            if owners[name] == session { owners[name] = nil }
        }
    }

    /// `base-n`, the base shortened so that the result stays a valid name
    /// (`[A-Za-z0-9_.-]{1,32}`, ASCII).
    static func marked(_ base: String, _ n: Int) -> String {
        let suffix = "-\(n)"
        return String(decoding: base.utf8.prefix(32 - suffix.utf8.count), as: UTF8.self) + suffix
    }
}
