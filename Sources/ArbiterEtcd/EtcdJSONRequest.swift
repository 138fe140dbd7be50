import ArbiterCluster
import ArbiterWire

/// The gateway's request bodies: proto3 JSON, so bytes are base64 and 64-bit integers are
/// strings. Base64 needs no JSON escaping, so the bodies are assembled as text.
enum EtcdJSONRequest {
    static func leaseGrant(ttlSeconds: Int64) -> String {
        #"{"TTL":"\#(ttlSeconds)","ID":"0"}"#
    }

    static func lease(id: Int64) -> String {
        #"{"ID":"\#(id)"}"#
    }

    static func range(_ keys: EtcdKeyRange) -> String {
        "{\(keyFields(keys))}"
    }

    static func watch(_ keys: EtcdKeyRange, startRevision: Int64) -> String {
        #"{"create_request":{\#(keyFields(keys)),"start_revision":"\#(startRevision)","prev_kv":true}}"#
    }

    static func txn(_ txn: EtcdTxn) -> String {
        let compare = txn.compare.map(compareJSON).joined(separator: ",")
        let success = txn.success.map(operationJSON).joined(separator: ",")
        let failure = txn.failure.map(operationJSON).joined(separator: ",")
        return #"{"compare":[\#(compare)],"success":[\#(success)],"failure":[\#(failure)]}"#
    }

    private static func keyFields(_ keys: EtcdKeyRange) -> String {
        var out = #""key":"\#(Base64.encode(keys.key))""#
        if let end = keys.rangeEnd { out += #","range_end":"\#(Base64.encode(end))""# }
        return out
    }

    private static func compareJSON(_ c: EtcdCompare) -> String {
        let target: String
        switch c.target {
        case .createRevision(let r): target = #""target":"CREATE","create_revision":"\#(r)""#
        case .modRevision(let r): target = #""target":"MOD","mod_revision":"\#(r)""#
        case .version(let v): target = #""target":"VERSION","version":"\#(v)""#
        case .value(let v): target = #""target":"VALUE","value":"\#(Base64.encode(v))""#
        }
        return #"{"result":"\#(c.result.rawValue)",\#(target),"key":"\#(Base64.encode(c.key))"}"#
    }

    private static func operationJSON(_ op: EtcdOperation) -> String {
        switch op {
        case .put(let key, let value, let lease):
            return #"{"request_put":{"key":"\#(Base64.encode(key))","value":"\#(Base64.encode(value))","lease":"\#(lease)"}}"#
        case .delete(let keys):
            return #"{"request_delete_range":{\#(keyFields(keys))}}"#
        case .range(let keys):
            return #"{"request_range":{\#(keyFields(keys))}}"#
        }
    }
}
