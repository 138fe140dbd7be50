/// Wrong keys per client address, across all its connections: a few are free, then
/// each one locks the address out of presenting keys for a time that doubles up to a
/// ceiling. While locked out, no key from the address is checked at all, the right one
/// included, so guessing from many connections in parallel gains nothing. Pure: the
/// caller passes the monotonic time in milliseconds.
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

        public init(
            allowance: Int = 5, baseLockoutMs: Int64 = 1000, maxLockoutMs: Int64 = 300_000,
            forgetAfterMs: Int64 = 900_000, maxAddresses: Int = 10_000
        ) {
            self.allowance = allowance
            self.baseLockoutMs = baseLockoutMs
            self.maxLockoutMs = maxLockoutMs
            self.forgetAfterMs = forgetAfterMs
            self.maxAddresses = maxAddresses
        }
    }

    public enum Decision: Equatable, Sendable {
        case allowed
        case lockedOut(remainingMs: Int64)
    }

    private struct Record {
        var failures = 0
        var lastFailure: Int64 = 0
        var lockedUntil: Int64 = 0
    }

    public let policy: Policy
    private var records: [String: Record] = [:]

    public init(policy: Policy) {
        self.policy = policy
    }

    /// Whether `address` may present a key now.
    public func check(_ address: String, now: Int64) -> Decision {
        guard policy.allowance > 0, let record = records[address], record.lockedUntil > now else { return .allowed }
        return .lockedOut(remainingMs: record.lockedUntil - now)
    }

    /// A wrong key from `address`; returns the lockout it starts (milliseconds), if any.
    @discardableResult
    public mutating func recordFailure(_ address: String, now: Int64) -> Int64? {
        guard policy.allowance > 0 else { return nil }
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
}
