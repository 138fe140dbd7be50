import ArbiterCluster
import ArbiterHooks
import ArbiterIO
import ArbiterServer
import ArbiterWire
import Dispatch

/// Hooked panels' pending deliveries, kept in etcd (`ClusterKeys.hook`) so that a
/// panel's next leader finishes what its last one could not: the leader writes a
/// command's deliveries in one transaction, guarded by its term, before any member sees
/// the events (the one wait hooks add, and only to hooked events); it deletes each once
/// delivered or dropped; a node that starts leading the panel reads what is left.
///
/// The value is JSON: `{"url":"..","term":..,"seq":..,"wall":..,"body":"{..}"}`.
final class ClusterHookStore: HookPersistence, @unchecked Sendable {
    /// A delivery read back, with the term that made it.
    struct Found {
        var pending: HookStore.Pending
        var term: Int64
    }

    private let etcd: any EtcdAPI
    private let keys: ClusterKeys
    private let log: ServerLog
    /// Deletes and reads, in order: a read sees this node's earlier deletes done.
    private let queue = DispatchQueue(label: "arbiter.cluster.hooks")
    private let state = Locked(Batch())
    /// etcd refuses a transaction of more than 128 operations by default (`--max-txn-ops`).
    static let operationsPerTxn = 100

    struct Batch {
        var deletes: [String] = []
        var flushQueued = false
        var failing = false
    }

    init(etcd: any EtcdAPI, keys: ClusterKeys, log: ServerLog) {
        self.etcd = etcd
        self.keys = keys
        self.log = log
    }

    /// On the panel's queue, which waits for etcd's answer: a member may see the events
    /// only once a failover cannot lose their deliveries.
    @discardableResult
    func add(_ items: [(hook: String, url: String, delivery: HookDelivery)], panel: String, term: Int64?) -> Bool {
        guard let term else { return false }
        let leader = keys.leader(panel)
        var kept = true
        var start = 0
        while start < items.count {
            let chunk = items[start..<min(items.count, start + Self.operationsPerTxn)]
            start += chunk.count
            let puts = chunk.map { item in
                EtcdOperation.put(keys.hook(item.hook, id: item.delivery.id), Self.value(url: item.url, term: term, item.delivery))
            }
            do {
                // A deposed leader's write fails: its term's key is gone or another's.
                if try etcd.txn(EtcdTxn(compare: [.createRevision(leader, .equal, term)], success: puts)).succeeded { continue }
                kept = false
                log.warning("hook deliveries not kept in etcd: this node no longer leads the panel", ["panel": panel, "term": "\(term)"])
            } catch {
                kept = false
                log.warning(
                    "hook deliveries not kept in etcd; a failover now would lose them", ["panel": panel, "events": "\(chunk.count)", "error": "\(error)"])
            }
        }
        return kept
    }

    /// Batched: the deletes that came while one transaction was on its way go in the next.
    func done(hook: String, id: String) {
        let queue = state.withLock { s -> Bool in
            s.deletes.append(keys.hook(hook, id: id))
            defer { s.flushQueued = true }
            return !s.flushQueued
        }
        if queue { self.queue.async { self.flushDeletes() } }
    }

    private func flushDeletes() {
        let keys = state.withLock { s -> [String] in
            let taken = Array(s.deletes.prefix(Self.operationsPerTxn))
            s.deletes.removeFirst(taken.count)
            s.flushQueued = !s.deletes.isEmpty
            return taken
        }
        if keys.isEmpty { return }
        defer { if state.withLock({ $0.flushQueued }) { queue.async { self.flushDeletes() } } }
        do {
            _ = try etcd.txn(EtcdTxn(compare: [], success: keys.map { .delete($0) }))
            let recovered = state.withLock { s in
                defer { s.failing = false }
                return s.failing
            }
            if recovered { log.info("hook deliveries deleted from etcd again") }
        } catch {
            // Left in etcd, they are delivered again by the panel's next leader, same id.
            let first = state.withLock { s in
                defer { s.failing = true }
                return !s.failing
            }
            if first { log.warning("delivered hook events not deleted from etcd; a next leader would send them again", ["error": "\(error)"]) }
        }
    }

    /// What is pending for `panel`, read on this store's queue and handed to `found`;
    /// tried again every second while etcd does not answer, up to `attempts` times.
    func load(panel: String, attempts: Int = 30, _ found: @escaping @Sendable ([Found]) -> Void) {
        queue.async {
            let prefix = self.keys.hooks(panel)
            do {
                let answer = try self.etcd.range(.prefix(prefix))
                found(answer.kvs.compactMap { Self.found($0, prefix: prefix, panel: panel) })
            } catch {
                self.log.warning("hook deliveries left by the panel's last leader not read yet", ["panel": panel, "error": "\(error)"])
                guard attempts > 1 else { return }
                self.queue.asyncAfter(deadline: .now() + .seconds(1)) { self.load(panel: panel, attempts: attempts - 1, found) }
            }
        }
    }

    static func value(url: String, term: Int64, _ d: HookDelivery) -> String {
        var out = Array(#"{"url":"#.utf8)
        JSONString.append(url, to: &out)
        out += Array(#","term":\#(term),"seq":\#(d.seq),"wall":\#(d.createdWallMs),"body":"#.utf8)
        JSONString.append(String(decoding: d.body, as: UTF8.self), to: &out)
        out += Array("}".utf8)
        return String(decoding: out, as: UTF8.self)
    }

    /// `<prefix><index>/<id>` and its value; nil for anything else.
    static func found(_ kv: EtcdKeyValue, prefix: String, panel: String) -> Found? {
        let rest = kv.keyText.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false)
        guard kv.keyText.hasPrefix(prefix), rest.count == 2, let index = Int(rest[0]), !rest[1].isEmpty,
            let v = try? JSONParser.parse(kv.value), case .string(let url)? = v["url"], case .string(let body)? = v["body"],
            let term = v["term"]?.integer, let seq = v["seq"]?.integer, let wall = v["wall"]?.integer
        else { return nil }
        let delivery = HookDelivery(id: String(rest[1]), seq: UInt64(max(0, seq)), body: Array(body.utf8), createdWallMs: wall)
        return Found(pending: HookStore.Pending(hook: "\(panel)/\(index)", url: url, delivery: delivery), term: term)
    }
}
