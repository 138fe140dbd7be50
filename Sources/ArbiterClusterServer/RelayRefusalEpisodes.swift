/// How refused relay handshakes reach the log. One line per refusal let anyone who
/// reaches the port write to it as fast as they can connect; so refusals of one kind come
/// in episodes:
///
/// - the first refusal of an episode is logged in full, as before: `relay link refused`
///   with `peer=` and `reason=` (what an operator alerts on, and what names a node with a
///   wrong key at once);
/// - later ones are counted; at each tick (`RelayOptions.refusalLogIntervalMs`, 10 s) that
///   saw more, one `relay handshakes refused` line says how many (`count=` since the last
///   line, `total=` in the episode) and the latest `peer=` and `reason=`;
/// - a tick that saw none ends the episode; if any refusal went unlogged one by one,
///   `relay handshake refusals ended` says its `total=`.
///
/// So each kind writes at most two lines per interval, however many connections come.
/// Kinds are apart so that a flood of one kind never hides the first refusal of another
/// (a wrong key during a flood). A value under `RelayNetwork`'s lock; the network ticks it.
struct RelayRefusalEpisodes {
    enum Kind: CaseIterable, Sendable {
        /// No handshake slot (`RelayHandshakeSlots`).
        case busy
        /// The handshake's deadline passed.
        case tooSlow
        /// A proof made without the cluster key.
        case wrongKey
        /// Anything else than the relay handshake.
        case notARelayPeer
        /// The peer went away, or the socket failed, or the relay stopped, mid-handshake.
        case gone
    }

    struct Line: Equatable, Sendable {
        enum Message: String, Sendable {
            case refused = "relay link refused"
            case summary = "relay handshakes refused"
            case ended = "relay handshake refusals ended"
        }

        let message: Message
        let kind: Kind
        let peer: String
        let reason: String
        /// Refusals since the kind's last line (summary), or 1.
        let count: Int
        /// Refusals in the episode so far.
        let total: Int
    }

    private struct Episode {
        var total = 1
        var unlogged = 0
        var peer: String
        var reason: String
    }

    private var episodes: [Kind: Episode] = [:]

    /// Whether an episode is open: the network ticks while one is.
    var isOpen: Bool { !episodes.isEmpty }

    /// A refusal; the line to log now, if any.
    mutating func refused(_ kind: Kind, peer: String, reason: String) -> Line? {
        guard var episode = episodes[kind] else {
            episodes[kind] = Episode(peer: peer, reason: reason)
            return Line(message: .refused, kind: kind, peer: peer, reason: reason, count: 1, total: 1)
        }
        episode.total += 1
        episode.unlogged += 1
        episode.peer = peer
        episode.reason = reason
        episodes[kind] = episode
        return nil
    }

    /// Once per interval while `isOpen`: the lines to log now, in `Kind` order.
    mutating func tick() -> [Line] {
        var lines: [Line] = []
        for kind in Kind.allCases {
            guard var episode = episodes[kind] else { continue }
            if episode.unlogged > 0 {
                lines.append(
                    Line(message: .summary, kind: kind, peer: episode.peer, reason: episode.reason, count: episode.unlogged, total: episode.total))
                episode.unlogged = 0
                episodes[kind] = episode
            } else {
                episodes[kind] = nil
                if episode.total > 1 {
                    lines.append(Line(message: .ended, kind: kind, peer: episode.peer, reason: episode.reason, count: 0, total: episode.total))
                }
            }
        }
        return lines
    }
}
