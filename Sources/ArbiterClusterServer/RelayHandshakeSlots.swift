/// The accepted relay handshakes under way (`RelayNetwork.adopt`), and whether one more
/// may start. Anyone who reaches the port can open one by sending `RELAY-HELLO`, and each
/// holds a descriptor and a link until its proof comes or its deadline passes, so they
/// are bounded three ways (`RelayOptions`):
///
/// - in all (`maxPendingHandshakes`);
/// - per source address (`maxPendingHandshakesPerAddress`; an IPv6 source by its /64), so
///   one machine cannot take every slot;
/// - for sources that are no registered node's address, all but
///   `handshakesReservedForNodes`: strangers from many addresses together still leave
///   those slots to the cluster's own nodes, which dial from their advertised addresses.
///   A node dials another one link at a time, so the reserve covers that many nodes
///   handshaking with this one at once, flood or not.
///
/// A value owned by `RelayNetwork`'s lock; no clock, no sockets.
struct RelayHandshakeSlots {
    private struct Held {
        let source: [UInt8]
        let fromNode: Bool
    }

    let total: Int
    let perSource: Int
    let reserved: Int
    private var held: [ObjectIdentifier: Held] = [:]
    private var bySource: [[UInt8]: Int] = [:]
    private var strangers = 0

    init(options: RelayOptions) {
        total = max(0, options.maxPendingHandshakes)
        perSource = max(0, options.maxPendingHandshakesPerAddress)
        reserved = min(total, max(0, options.handshakesReservedForNodes))
    }

    /// Handshakes under way.
    var count: Int { held.count }

    /// Of them, from addresses that are no registered node's.
    var strangerCount: Int { strangers }

    /// Takes a slot for the handshake `id` from `peer` (nil: an address that could not be
    /// read, all such counted as one source), or says why not: the words of its
    /// `RELAY-REFUSED` line. `fromNode`: `peer` is a registered node's address. `host` names
    /// the source in the refusal.
    mutating func take(_ id: ObjectIdentifier, from peer: RelayPeerAddress?, fromNode: Bool, host: String) -> String? {
        guard held[id] == nil else { return nil }
        let source = peer?.source ?? []
        if held.count >= total { return "busy: \(total) relay handshakes under way" }
        if bySource[source, default: 0] >= perSource { return "busy: \(perSource) relay handshakes under way from \(host)" }
        if !fromNode, strangers >= total - reserved {
            return "busy: \(total - reserved) relay handshakes under way from addresses of no registered node"
        }
        held[id] = Held(source: source, fromNode: fromNode)
        bySource[source, default: 0] += 1
        if !fromNode { strangers += 1 }
        return nil
    }

    /// The handshake `id` finished or closed; nothing if it held no slot.
    mutating func release(_ id: ObjectIdentifier) {
        guard let slot = held.removeValue(forKey: id) else { return }
        let left = bySource[slot.source, default: 1] - 1
        bySource[slot.source] = left > 0 ? left : nil
        if !slot.fromNode { strangers -= 1 }
    }
}
