import Glibc

/// Wrong keys per client address, across all its connections: a few are free, then
/// each one locks the address out of presenting keys for a time that doubles up to a
/// ceiling. While locked out, no key from the address is checked at all, the right one
/// included, so guessing from many connections in parallel gains nothing. Pure: the
/// caller passes the monotonic time in milliseconds.
///
/// An address is what a client cannot cheaply get many of: an IPv4 address, but an IPv6
/// /64 prefix, since one host commonly has a whole /64 to itself. And since a client can
/// still come from many addresses (a botnet, 127.0.0.0/8 on the machine itself), the
/// whole server also takes at most `ceilingPerSecond` wrong keys a second; past it no
/// key from anyone is checked until the ceiling refills.
public struct KeyFailureBudget: Sendable {
    public struct Policy: Sendable, Equatable {
        /// Wrong keys an address may present before the first lockout; 0 turns the
        /// budget off.
        public var allowance: Int
        /// The first lockout; each further wrong key doubles it.
        public var baseLockoutMs: Int64
        public var maxLockoutMs: Int64
        /// An address with no wrong key for this long starts over.
        public var forgetAfterMs: Int64
        /// Addresses remembered at most; the stalest is dropped to make room.
        public var maxAddresses: Int
        /// Wrong keys the whole server takes per second, from all addresses together (a
        /// second's worth may come at once); 0: no ceiling. Only wrong keys count, so a
        /// storm of kiosks reconnecting with the right key is never refused by it.
        public var ceilingPerSecond: Int

        public init(
            allowance: Int = 5, baseLockoutMs: Int64 = 1000, maxLockoutMs: Int64 = 300_000,
            forgetAfterMs: Int64 = 900_000, maxAddresses: Int = 10_000, ceilingPerSecond: Int = 50
        ) {
            self.allowance = allowance
            self.baseLockoutMs = baseLockoutMs
            self.maxLockoutMs = maxLockoutMs
            self.forgetAfterMs = forgetAfterMs
            self.maxAddresses = maxAddresses
            self.ceilingPerSecond = ceilingPerSecond
        }
    }

    public enum Decision: Equatable, Sendable {
        case allowed
        /// This address (IPv6: its /64) presented too many wrong keys.
        case lockedOut(remainingMs: Int64)
        /// The whole server took `ceilingPerSecond` wrong keys lately, whoever sent them.
        case ceilingReached(remainingMs: Int64)
    }

    private struct Record {
        var failures = 0
        var lastFailure: Int64 = 0
        var lockedUntil: Int64 = 0
    }

    public let policy: Policy
    private var records: [String: Record] = [:]
    /// The server-wide ceiling as a token bucket, in thousandths of a wrong key: it holds
    /// at most a second's worth and refills `ceilingPerSecond` thousandths a millisecond.
    private var ceilingMillis: Int64
    private var ceilingAt: Int64 = .min
    private var ceilingWarnedAt: Int64 = .min

    public init(policy: Policy) {
        self.policy = policy
        ceilingMillis = Int64(policy.ceilingPerSecond) * 1000
    }

    /// Whether `address` may present a key now.
    public func check(_ address: String, now: Int64) -> Decision {
        if policy.allowance > 0, let record = records[Self.client(ofAddress: address)], record.lockedUntil > now {
            return .lockedOut(remainingMs: record.lockedUntil - now)
        }
        if policy.ceilingPerSecond > 0 {
            let available = ceiling(at: now)
            if available < 1000 {
                let rate = Int64(policy.ceilingPerSecond)
                return .ceilingReached(remainingMs: (1000 - available + rate - 1) / rate)
            }
        }
        return .allowed
    }

    /// A wrong key from `address`; returns the lockout it starts (milliseconds), if any.
    @discardableResult
    public mutating func recordFailure(_ address: String, now: Int64) -> Int64? {
        if policy.ceilingPerSecond > 0 {
            ceilingMillis = max(0, ceiling(at: now) - 1000)
            ceilingAt = now
        }
        guard policy.allowance > 0 else { return nil }
        let address = Self.client(ofAddress: address)
        var record = records[address] ?? Record()
        if record.failures > 0, now - record.lastFailure > policy.forgetAfterMs { record = Record() }
        record.failures += 1
        record.lastFailure = now
        var lockout: Int64?
        let over = record.failures - policy.allowance
        if over > 0 {
            let doublings = Int64(min(over - 1, 40))
            let ms = min(policy.maxLockoutMs, policy.baseLockoutMs << doublings)
            record.lockedUntil = now + ms
            lockout = ms
        }
        if records[address] == nil, records.count >= policy.maxAddresses { evict(now: now) }
        records[address] = record
        return lockout
    }

    /// Addresses remembered now.
    public var count: Int { records.count }

    /// Whether a refusal by the ceiling should be logged: the first, then at most one a
    /// minute, since an attack at the ceiling would otherwise log every refill.
    public mutating func takeCeilingWarning(now: Int64) -> Bool {
        guard ceilingWarnedAt == .min || now - ceilingWarnedAt >= 60_000 else { return false }
        ceilingWarnedAt = now
        return true
    }

    /// The ceiling's thousandths of a wrong key at `now`.
    private func ceiling(at now: Int64) -> Int64 {
        let full = Int64(policy.ceilingPerSecond) * 1000
        guard ceilingAt != .min, now > ceilingAt else { return ceilingMillis }
        let refill = (now - ceilingAt).multipliedReportingOverflow(by: Int64(policy.ceilingPerSecond))
        return refill.overflow ? full : min(full, ceilingMillis + refill.partialValue)
    }

    /// Forgets addresses that have started over; if none has, the one whose last wrong
    /// key is oldest.
    private mutating func evict(now: Int64) {
        let before = records.count
        records = records.filter { now - $0.value.lastFailure <= policy.forgetAfterMs || $0.value.lockedUntil > now }
        if records.count < before { return }
        if let stalest = records.min(by: { $0.value.lastFailure < $1.value.lastFailure })?.key {
            records[stalest] = nil
        }
    }

    /// The address part of a peer as the server logs it (`10.0.0.7:51234`,
    /// `[fe80::1]:51234`).
    public static func address(ofPeer peer: String) -> String {
        if peer.hasPrefix("["), let close = peer.firstIndex(of: "]") {
            return String(peer[peer.index(after: peer.startIndex)..<close])
        }
        if let colon = peer.lastIndex(of: ":") { return String(peer[..<colon]) }
        return peer
    }

    /// Whom a budget belongs to: an IPv4 address as it is; an IPv6 address's /64 prefix
    /// (`2001:db8:1:2::/64`), as a host that has one address of a /64 usually has them
    /// all; an IPv4-mapped IPv6 address as the IPv4 address it is.
    public static func client(ofAddress address: String) -> String {
        guard address.contains(":") else { return address }
        let literal = address.firstIndex(of: "%").map { String(address[..<$0]) } ?? address
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, literal, &v6) == 1 else { return address }
        return withUnsafeBytes(of: &v6) { b in
            if b[0..<10].allSatisfy({ $0 == 0 }), b[10] == 0xFF, b[11] == 0xFF {
                return "\(b[12]).\(b[13]).\(b[14]).\(b[15])"
            }
            let groups = stride(from: 0, to: 8, by: 2).map { String(UInt16(b[$0]) << 8 | UInt16(b[$0 + 1]), radix: 16) }
            return groups.joined(separator: ":") + "::/64"
        }
    }
}
