import ArbiterIO
import ArbiterWire
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Deliveries not yet done, kept in a file beside the journal (`<journal>.hooks`) so
/// they outlive a restart, `kill -9` included: an `add` line is written (into the kernel,
/// like the journal's records) before the event is broadcast, a `done` line once it was
/// delivered or dropped. At start, the adds without their done are sent again, with the
/// same `webhook-id`. JSON lines, as the journal:
///
///     {"op":"add","hook":"<panel>/<index>","url":"..","id":"..","seq":38,"wall":..,"body":"{..}"}
///     {"op":"done","hook":"<panel>/<index>","id":".."}
///
/// The live adds are kept in memory too (bounded by each hook's `max_pending`), so when
/// the file has grown past four times them (and 1 MiB) it is rewritten to just them.
public final class HookStore: @unchecked Sendable {
    public struct Pending: Sendable, Equatable {
        public var hook: String
        public var url: String
        public var delivery: HookDelivery

        public init(hook: String, url: String, delivery: HookDelivery) {
            self.hook = hook
            self.url = url
            self.delivery = delivery
        }
    }

    struct State {
        var fd: Int32
        var written = 0
        /// By hook key and id: the add line.
        var live: [String: [UInt8]] = [:]
        var liveBytes = 0
        var failures = 0
    }

    public let path: String
    private let state: Locked<State>
    private let log: HookLog

    /// Opens the file, and returns with it what is still to be delivered.
    public init(path: String, log: HookLog) throws {
        self.path = path
        self.log = log
        let loaded = Self.load(path: path)
        var state = State(fd: -1)
        for p in loaded {
            let line = Self.addLine(hook: p.hook, url: p.url, p.delivery)
            state.live[p.hook + " " + p.delivery.id] = line
            state.liveBytes += line.count
        }
        state.fd = try Self.rewrite(path: path, lines: Array(state.live.values))
        state.written = state.liveBytes
        self.state = Locked(state)
        self.loaded = loaded
    }

    /// What the file held undelivered when it was opened, in file order.
    public let loaded: [Pending]

    deinit { state.withLock { if $0.fd >= 0 { close($0.fd) } } }

    /// Records new deliveries, before their events are broadcast. False if the write
    /// failed: the events are still sent, but would not be again after a crash.
    @discardableResult
    public func add(_ items: [(hook: String, url: String, delivery: HookDelivery)]) -> Bool {
        var bytes: [UInt8] = []
        var lines: [(String, [UInt8])] = []
        for item in items {
            let line = Self.addLine(hook: item.hook, url: item.url, item.delivery)
            bytes += line
            lines.append((item.hook + " " + item.delivery.id, line))
        }
        return state.withLock { s in
            guard append(&s, bytes) else { return false }
            for (key, line) in lines {
                s.live[key] = line
                s.liveBytes += line.count
            }
            return true
        }
    }

    /// Records that a delivery is delivered or dropped.
    public func done(hook: String, id: String) {
        var line = Array(#"{"op":"done","hook":"#.utf8)
        JSONString.append(hook, to: &line)
        line += Array(#","id":"#.utf8)
        JSONString.append(id, to: &line)
        line += Array("}\n".utf8)
        state.withLock { s in
            guard let removed = s.live.removeValue(forKey: hook + " " + id) else { return }
            s.liveBytes -= removed.count
            _ = append(&s, line)
            if s.written > max(1 << 20, 4 * s.liveBytes) { compact(&s) }
        }
    }

    private func append(_ s: inout State, _ bytes: [UInt8]) -> Bool {
        let n = bytes.withUnsafeBytes { write(s.fd, $0.baseAddress, $0.count) }
        guard n == bytes.count else {
            s.failures += 1
            if s.failures == 1 { log.write(.warning, "hook store cannot be written; undelivered events would be lost by a crash", ["path": path]) }
            if n > 0 { _ = ftruncate(s.fd, lseek(s.fd, 0, SEEK_CUR) - off_t(n)) }
            return false
        }
        if s.failures > 0 {
            s.failures = 0
            log.write(.info, "hook store written again", ["path": path])
        }
        s.written += n
        return true
    }

    private func compact(_ s: inout State) {
        do {
            let fd = try Self.rewrite(path: path, lines: Array(s.live.values))
            close(s.fd)
            s.fd = fd
            s.written = s.liveBytes
        } catch {
            log.write(.warning, "hook store not compacted", ["path": path, "error": "\(error)"])
        }
    }

    static func addLine(hook: String, url: String, _ d: HookDelivery) -> [UInt8] {
        var line = Array(#"{"op":"add","hook":"#.utf8)
        JSONString.append(hook, to: &line)
        line += Array(#","url":"#.utf8)
        JSONString.append(url, to: &line)
        line += Array(#","id":"#.utf8)
        JSONString.append(d.id, to: &line)
        line += Array(#","seq":\#(d.seq),"wall":\#(d.createdWallMs),"body":"#.utf8)
        JSONString.append(String(decoding: d.body, as: UTF8.self), to: &line)
        line += Array("}\n".utf8)
        return line
    }

    /// The adds without a done. A torn last line (a crash mid-write) is skipped.
    static func load(path: String) -> [Pending] {
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        var order: [String] = []
        var adds: [String: Pending] = [:]
        for line in data.split(separator: UInt8(ascii: "\n")) {
            guard let v = try? JSONParser.parse(Array(line)), case .string(let op)? = v["op"], case .string(let hook)? = v["hook"],
                case .string(let id)? = v["id"]
            else { continue }
            let key = hook + " " + id
            if op == "done" {
                adds[key] = nil
                continue
            }
            guard op == "add", case .string(let url)? = v["url"], case .string(let body)? = v["body"], let seq = v["seq"]?.integer,
                let wall = v["wall"]?.integer
            else { continue }
            if adds[key] == nil { order.append(key) }
            adds[key] = Pending(hook: hook, url: url, delivery: HookDelivery(id: id, seq: UInt64(max(0, seq)), body: Array(body.utf8), createdWallMs: wall))
        }
        return order.compactMap { adds[$0] }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Writes `lines` to a new file, synced, renamed over `path`; the new file's
    /// descriptor, open for appending.
    static func rewrite(path: String, lines: [[UInt8]]) throws -> Int32 {
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Failure(description: "\(temporary): \(String(cString: strerror(errno)))") }
        let bytes = lines.flatMap { $0 }
        let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard n == bytes.count, fsync(fd) == 0, rename(temporary, path) == 0 else {
            let why = String(cString: strerror(errno))
            close(fd)
            throw Failure(description: "\(path): \(why)")
        }
        return fd
    }
}

extension HookStore: HookPersistence {
    /// A single node has one term: the file is its only guard.
    @discardableResult
    public func add(_ items: [(hook: String, url: String, delivery: HookDelivery)], panel: String, term: Int64?) -> Bool { add(items) }
}
