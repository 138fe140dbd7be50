import ArbiterCluster
import ArbiterIO
import ArbiterWire
import Foundation

/// etcd v3 through its HTTP/JSON gateway, over plain sockets: one short connection per
/// call (`Connection: close`), each call bounded by `timeoutMilliseconds` in all.
///
/// Endpoints are tried in turn, starting with the last one that worked, but only while
/// nothing has been sent: a request that reached a member and got no answer is reported
/// as `unavailable` and not retried elsewhere, because it may have been applied; every
/// write the cluster makes is a guarded transaction, so the caller's next step reads the
/// truth. The member that failed is moved behind the others for the next call, and so is
/// one that has left a call unanswered for a while (`EtcdMemberHealth`, which the node's
/// clients share): a frozen member accepts connections and then says nothing.
public final class EtcdHTTPClient: EtcdAPI, @unchecked Sendable {
    public let endpoints: [EtcdEndpoint]
    public let timeoutMilliseconds: Int64
    public let health: EtcdMemberHealth
    /// The endpoint tried first: the one that last answered.
    private let preferred = Locked(0)

    /// `health`: shared by every client of one node, so that what one call learns about a
    /// member steers the others; one of its own without it.
    public init(endpoints: [EtcdEndpoint], timeoutMilliseconds: Int64 = 2_000, health: EtcdMemberHealth? = nil) {
        precondition(!endpoints.isEmpty, "at least one etcd endpoint")
        precondition(health.map { $0.members == endpoints.count } ?? true, "one health record per endpoint")
        self.endpoints = endpoints
        self.timeoutMilliseconds = timeoutMilliseconds
        self.health = health ?? EtcdMemberHealth(members: endpoints.count)
    }

    /// The endpoint the next call tries first.
    public var currentEndpoint: EtcdEndpoint {
        endpoints[preferred.withLock { $0 }]
    }

    public func grantLease(ttlSeconds: Int64) throws(EtcdError) -> EtcdLease {
        let json = try call("/v3/lease/grant", EtcdJSONRequest.leaseGrant(ttlSeconds: ttlSeconds), streamed: false)
        let lease = try EtcdJSONResponse.lease(json)
        guard lease.id != 0, lease.ttlSeconds > 0 else { throw .malformed("lease grant without ID or TTL") }
        return lease
    }

    /// One keepalive as its own request, reading the first streamed answer and closing:
    /// etcd's issues show long-lived keepalive streams through the gateway going quiet.
    public func keepAlive(lease id: Int64) throws(EtcdError) -> EtcdLease {
        let json = try call("/v3/lease/keepalive", EtcdJSONRequest.lease(id: id), streamed: true)
        if let error = json["error"] { throw EtcdJSONResponse.error(.object([("error", error)]), httpStatus: 200) }
        guard let result = json["result"] else { throw .malformed("keepalive answer without result") }
        let lease = try EtcdJSONResponse.lease(result)
        // etcd answers a lease it does not know with a TTL of 0 (the field left out).
        guard lease.ttlSeconds > 0 else { throw .leaseNotFound }
        return lease
    }

    public func revokeLease(_ id: Int64) throws(EtcdError) {
        _ = try call("/v3/lease/revoke", EtcdJSONRequest.lease(id: id), streamed: false)
    }

    public func range(_ keys: EtcdKeyRange) throws(EtcdError) -> EtcdRangeResponse {
        try EtcdJSONResponse.range(try call("/v3/kv/range", EtcdJSONRequest.range(keys), streamed: false))
    }

    public func txn(_ txn: EtcdTxn) throws(EtcdError) -> EtcdTxnResponse {
        try EtcdJSONResponse.txn(try call("/v3/kv/txn", EtcdJSONRequest.txn(txn), streamed: false))
    }

    public func watch(_ keys: EtcdKeyRange, startRevision: Int64) throws(EtcdError) -> any EtcdWatchStream {
        let deadline = SystemClock.monotonic.milliseconds() + timeoutMilliseconds
        let (socket, index) = try open(deadline: deadline)
        let watch = EtcdHTTPWatch(socket: socket, endpoint: endpoints[index], member: index, health: health)
        // Counted as a call only until etcd confirms it: an open watch is quiet by design.
        let call = health.began(index)
        do {
            try socket.send(request("/v3/watch", EtcdJSONRequest.watch(keys, startRevision: startRevision), endpoint: endpoints[index]), deadline: deadline)
            try watch.awaitCreated(deadline: deadline)
        } catch {
            health.ended(call, answered: error.isAnswer)
            socket.close()
            demote(index)
            throw error.etcdError(endpoint: endpoints[index], path: "/v3/watch", timeout: timeoutMilliseconds)
        }
        health.ended(call, answered: true)
        return watch
    }

    // MARK: Private

    private func call(_ path: String, _ body: String, streamed: Bool) throws(EtcdError) -> JSONValue {
        let deadline = SystemClock.monotonic.milliseconds() + timeoutMilliseconds
        let (socket, index) = try open(deadline: deadline)
        defer { socket.close() }
        let endpoint = endpoints[index]
        var reader = HTTPResponseReader()
        var bodyBytes: [UInt8] = []
        let call = health.began(index)
        do {
            try socket.send(request(path, body, endpoint: endpoint), deadline: deadline)
            while !reader.isComplete {
                let got = try socket.receive(deadline: deadline)
                do { bodyBytes += try reader.feed(got) } catch { throw EtcdClientFailure.http(error) }
                if got.isEmpty { break }
                // A streamed answer is one JSON object per line; the first one is all we want.
                if streamed, reader.status == 200, let newline = bodyBytes.firstIndex(of: 10) {
                    bodyBytes = Array(bodyBytes[..<newline])
                    break
                }
            }
        } catch {
            health.ended(call, answered: false)
            demote(index)
            throw error.etcdError(endpoint: endpoint, path: path, timeout: timeoutMilliseconds)
        }
        health.ended(call, answered: true)
        let json: JSONValue
        do {
            json = try JSONParser.parse(bodyBytes)
        } catch {
            throw .malformed("\(path) from \(endpoint): \(error)")
        }
        guard reader.status == 200 else {
            let failure = EtcdJSONResponse.error(json, httpStatus: reader.status ?? 0)
            if case .unavailable = failure { demote(index) }
            throw failure
        }
        return json
    }

    /// A connection to the first endpoint that accepts one: from the preferred one on,
    /// the suspect ones last.
    private func open(deadline: Int64) throws(EtcdError) -> (EtcdSocket, Int) {
        let start = preferred.withLock { $0 }
        var reasons: [String] = []
        // Each endpoint gets a share of the time, so one that swallows SYNs cannot use it all.
        let share = max(200, timeoutMilliseconds / Int64(endpoints.count))
        for index in health.order(from: start) {
            let now = SystemClock.monotonic.milliseconds()
            guard now < deadline else { break }
            do {
                let socket = try EtcdSocket.connect(to: endpoints[index], deadline: min(deadline, now + share))
                preferred.withLock { $0 = index }
                return (socket, index)
            } catch {
                health.unreachable(index)
                reasons.append(error.summary)
            }
        }
        throw .unavailable("no etcd endpoint answered within \(timeoutMilliseconds) ms (\(reasons.joined(separator: "; ")))")
    }

    private func demote(_ index: Int) {
        preferred.withLock { if $0 == index { $0 = (index + 1) % endpoints.count } }
    }

    private func request(_ path: String, _ body: String, endpoint: EtcdEndpoint) -> [UInt8] {
        let bytes = Array(body.utf8)
        let head =
            "POST \(path) HTTP/1.1\r\nHost: \(endpoint.authority)\r\nContent-Type: application/json\r\nContent-Length: \(bytes.count)\r\nConnection: close\r\n\r\n"
        return Array(head.utf8) + bytes
    }
}
