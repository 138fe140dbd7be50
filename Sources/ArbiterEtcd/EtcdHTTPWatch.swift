import ArbiterCluster
import ArbiterIO
import ArbiterWire

/// A watch held open as one streamed gateway response: one JSON message per line.
final class EtcdHTTPWatch: EtcdWatchStream {
    private let socket: EtcdSocket
    private let endpoint: EtcdEndpoint
    private let member: Int
    private let health: EtcdMemberHealth
    private var reader = HTTPResponseReader()
    private var pending: [UInt8] = []
    private var closed = false

    init(socket: EtcdSocket, endpoint: EtcdEndpoint, member: Int, health: EtcdMemberHealth) {
        self.socket = socket
        self.endpoint = endpoint
        self.member = member
        self.health = health
    }

    /// Reads up to etcd's `created` confirmation, keeping any events that follow it.
    func awaitCreated(deadline: Int64) throws(EtcdClientFailure) {
        while true {
            while let message = try nextLine() {
                let result = try check(message)
                if case .bool(true)? = result["created"] { return }
            }
            try fill(deadline: deadline)
        }
    }

    func next(timeoutMilliseconds: Int) throws(EtcdError) -> [EtcdWatchEvent] {
        guard !closed else { throw .unavailable("watch on \(endpoint) closed") }
        // A frozen member's watch is as quiet as an idle one's; what the node's other
        // calls found out about the member tells them apart.
        if health.shouldLeave(member) {
            cancel()
            throw .unavailable("\(endpoint) stopped answering the node's other calls; watching from another member")
        }
        let deadline = SystemClock.monotonic.milliseconds() + Int64(timeoutMilliseconds)
        var events: [EtcdWatchEvent] = []
        while true {
            let failure: EtcdClientFailure
            do throws(EtcdClientFailure) {
                while let message = try nextLine() {
                    events += try decodeEvents(try check(message))
                }
                if !events.isEmpty { return events }
                try fill(deadline: deadline)
                continue
            } catch {
                failure = error
            }
            if case .socket(.timeout) = failure { return events }
            cancel()
            throw failure.etcdError(endpoint: endpoint, path: "/v3/watch", timeout: Int64(timeoutMilliseconds))
        }
    }

    private func decodeEvents(_ result: JSONValue) throws(EtcdClientFailure) -> [EtcdWatchEvent] {
        do { return try EtcdJSONResponse.events(result) } catch { throw .etcd(error) }
    }

    func cancel() {
        closed = true
        socket.close()
    }

    private func fill(deadline: Int64) throws(EtcdClientFailure) {
        let got: [UInt8]
        do { got = try socket.receive(deadline: deadline) } catch { throw .socket(error) }
        do { pending += try reader.feed(got) } catch { throw .http(error) }
        if got.isEmpty { throw .socket(.io("etcd closed the watch")) }
        if let status = reader.status, status != 200 {
            // The whole error body arrives before the close; report it as etcd said it.
            if reader.isComplete, let json = try? JSONParser.parse(pending) {
                throw .etcd(EtcdJSONResponse.error(json, httpStatus: status))
            }
        }
    }

    private func nextLine() throws(EtcdClientFailure) -> JSONValue? {
        guard reader.status == 200, let newline = pending.firstIndex(of: 10) else { return nil }
        let line = Array(pending[..<newline])
        pending.removeFirst(newline + 1)
        if line.allSatisfy({ $0 == 32 || $0 == 13 }) { return try nextLine() }
        do { return try JSONParser.parse(line) } catch { throw .etcd(.malformed("watch message: \(error)")) }
    }

    /// The message's `result`, or the error it carries.
    private func check(_ message: JSONValue) throws(EtcdClientFailure) -> JSONValue {
        if let error = message["error"] { throw .etcd(EtcdJSONResponse.error(.object([("error", error)]), httpStatus: 200)) }
        guard let result = message["result"] else { throw .etcd(.malformed("watch message without result")) }
        if case .bool(true)? = result["canceled"] {
            let reason = result["cancel_reason"]?.string ?? "no reason given"
            throw .etcd(.unavailable("etcd canceled the watch: \(reason)"))
        }
        return result
    }
}
