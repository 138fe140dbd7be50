import ArbiterCluster
import ArbiterWire

/// Reads the gateway's answers. proto3 JSON leaves out every field at its default, so a
/// missing number is 0, a missing `succeeded` is false and a missing event `type` is PUT.
enum EtcdJSONResponse {
    static func revision(_ json: JSONValue) throws(EtcdError) -> Int64 {
        try int(json["header"]?["revision"], "header.revision")
    }

    static func lease(_ json: JSONValue) throws(EtcdError) -> EtcdLease {
        EtcdLease(id: try int(json["ID"], "ID"), ttlSeconds: try int(json["TTL"], "TTL"))
    }

    static func range(_ json: JSONValue) throws(EtcdError) -> EtcdRangeResponse {
        EtcdRangeResponse(revision: try revision(json), kvs: try kvs(json["kvs"]))
    }

    static func txn(_ json: JSONValue) throws(EtcdError) -> EtcdTxnResponse {
        var results: [EtcdOperationResult] = []
        if case .array(let items)? = json["responses"] {
            for item in items {
                if let range = item["response_range"] {
                    results.append(.range(try kvs(range["kvs"])))
                } else if let delete = item["response_delete_range"] {
                    results.append(.delete(deleted: try int(delete["deleted"], "deleted")))
                } else if item["response_put"] != nil {
                    results.append(.put)
                } else {
                    throw .malformed("unknown txn response")
                }
            }
        }
        let succeeded: Bool
        switch json["succeeded"] {
        case .bool(let b)?: succeeded = b
        case nil: succeeded = false
        default: throw .malformed("succeeded is not a boolean")
        }
        return EtcdTxnResponse(succeeded: succeeded, revision: try revision(json), results: results)
    }

    static func events(_ json: JSONValue) throws(EtcdError) -> [EtcdWatchEvent] {
        guard case .array(let items)? = json["events"] else { return [] }
        var out: [EtcdWatchEvent] = []
        for item in items {
            let kind: EtcdWatchEvent.Kind
            switch item["type"]?.string {
            case nil, "PUT": kind = .put
            case "DELETE": kind = .delete
            case let other?: throw .malformed("event type \(other)")
            }
            guard let kv = item["kv"] else { throw .malformed("event without kv") }
            out.append(EtcdWatchEvent(kind: kind, kv: try keyValue(kv), previous: try item["prev_kv"].map { v throws(EtcdError) in try keyValue(v) }))
        }
        return out
    }

    /// The error an unsuccessful answer carries: unary errors are `{"error","code"}`,
    /// streamed ones `{"error":{"grpc_code","message"}}`.
    static func error(_ json: JSONValue, httpStatus: Int) -> EtcdError {
        var code = json["code"]?.integer ?? json["error"]?["grpc_code"]?.integer ?? 0
        let message = json["error"]?.string ?? json["message"]?.string ?? json["error"]?["message"]?.string ?? "HTTP \(httpStatus)"
        if code == 0 { code = Int64(httpStatus) }
        if message.contains("lease not found") { return .leaseNotFound }
        // 14 Unavailable, 4 DeadlineExceeded; etcd's "no leader" and "request timed out"
        // are what a member without a majority says.
        if code == 14 || code == 4 || message.contains("no leader") || message.contains("timed out") || message.contains("leader changed") {
            return .unavailable(message)
        }
        return .server(code: code, message: message)
    }

    static func keyValue(_ json: JSONValue) throws(EtcdError) -> EtcdKeyValue {
        EtcdKeyValue(
            key: try bytes(json["key"], "key"),
            value: try bytes(json["value"], "value"),
            createRevision: try int(json["create_revision"], "create_revision"),
            modRevision: try int(json["mod_revision"], "mod_revision"),
            version: try int(json["version"], "version"),
            lease: try int(json["lease"], "lease"))
    }

    private static func kvs(_ json: JSONValue?) throws(EtcdError) -> [EtcdKeyValue] {
        guard let json else { return [] }
        guard case .array(let items) = json else { throw .malformed("kvs is not an array") }
        var out: [EtcdKeyValue] = []
        for item in items { out.append(try keyValue(item)) }
        return out
    }

    private static func int(_ json: JSONValue?, _ name: String) throws(EtcdError) -> Int64 {
        switch json {
        case nil: return 0
        case .string(let s)?:
            guard let v = Int64(s) else { throw .malformed("\(name) is not an integer") }
            return v
        case .number?:
            guard let v = json?.integer else { throw .malformed("\(name) is not an integer") }
            return v
        default: throw .malformed("\(name) is not an integer")
        }
    }

    private static func bytes(_ json: JSONValue?, _ name: String) throws(EtcdError) -> [UInt8] {
        guard let json else { return [] }
        guard let text = json.string, let decoded = Base64.decode(text) else { throw .malformed("\(name) is not base64") }
        return decoded
    }
}
