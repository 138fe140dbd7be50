import ArbiterCore
import ArbiterWire

/// A panel's hooks as its queue sees them: which events each wants, and the one call
/// (`capture`) that turns broadcast events into deliveries.
public final class PanelHooks: @unchecked Sendable {
    struct Filter {
        var events: Set<String>
        /// nil: every button.
        var buttons: Set<Int>?
        /// The groups of `buttons`, for group events (armed, closed).
        var groups: Set<String>?

        func wants(_ kind: PanelEvent.Kind, button: Int?) -> Bool {
            guard let name = HookConfig.eventName(kind), events.contains(name) else { return false }
            guard let buttons else { return true }
            if let button { return buttons.contains(button) }
            switch kind {
            case .armed(let group), .closed(let group): return groups?.contains(group) ?? true
            default: return false
            }
        }
    }

    public let panel: String
    public let runners: [HookRunner]
    private let filters: [Filter]
    private let names: PanelNames
    private let ids: WebhookID
    private let store: (any HookPersistence)?

    public init(config: PanelConfig, runners: [HookRunner], ids: WebhookID, store: (any HookPersistence)?) {
        self.panel = config.id
        self.runners = runners
        self.names = PanelNames(config)
        self.ids = ids
        self.store = store
        filters = runners.map { runner in
            let buttons = runner.config.buttons.map(Set.init)
            return Filter(
                events: Set(runner.config.events), buttons: buttons,
                groups: buttons.map { Set($0.map { config.buttons[$0].group }) })
        }
    }

    /// Makes the deliveries of `events` (one command's, in order) and hands them to their
    /// hooks. On the panel's queue, before the events are broadcast: with a store, they
    /// are on file (in etcd, in a cluster: `term` is the leader's) first, so none that a
    /// member saw is lost by a crash. Events no hook wants cost a switch each.
    public func capture(_ events: [PanelEvent], wallMs: Int64, term: Int64? = nil) {
        var batches: [[HookDelivery]] = []
        var stored: [(hook: String, url: String, delivery: HookDelivery)] = []
        for event in events {
            let button = event.button
            var body: [UInt8]? = nil
            for (i, filter) in filters.enumerated() where filter.wants(event.kind, button: button) {
                if body == nil { body = render(event, wallMs: wallMs) }
                let d = HookDelivery(id: ids.make(panel: panel, term: term, seq: event.seq), seq: event.seq, body: body ?? [], createdWallMs: wallMs)
                if batches.isEmpty { batches = Array(repeating: [], count: filters.count) }
                batches[i].append(d)
                if store != nil { stored.append((runners[i].key, runners[i].config.url, d)) }
            }
        }
        guard !batches.isEmpty else { return }
        if !stored.isEmpty { store?.add(stored, panel: panel, term: term) }
        for (i, batch) in batches.enumerated() where !batch.isEmpty { runners[i].submit(batch) }
    }

    /// Hands undelivered events back to their hooks, same id, same body: after a restart
    /// (the store's file), or when this node takes the panel over (etcd). A hook is matched
    /// by index and URL: one whose config changed gets none, and they are done. Returns
    /// how many matched no hook.
    @discardableResult
    public func resume(_ pending: [HookStore.Pending], wallMs: Int64, log: HookLog, why: String) -> Int {
        var items: [[HookDelivery]] = Array(repeating: [], count: runners.count)
        var ages: [[Int64]] = Array(repeating: [], count: runners.count)
        var unmatched = 0
        for p in pending {
            guard let i = runners.firstIndex(where: { $0.key == p.hook }), runners[i].config.url == p.url else {
                unmatched += 1
                store?.done(hook: p.hook, id: p.delivery.id)
                continue
            }
            items[i].append(p.delivery)
            ages[i].append(max(0, wallMs - p.delivery.createdWallMs) * 1_000_000)
        }
        for (i, runner) in runners.enumerated() where !items[i].isEmpty {
            log.write(.info, why, ["hook": runner.key, "pending": "\(items[i].count)"])
            runner.submit(items[i], ageNs: ages[i])
        }
        return unmatched
    }

    /// This node stopped deciding the panel: what its hooks still had is the next
    /// leader's to deliver (`HookRunner.abandon`).
    public func abandon() { for runner in runners { runner.abandon() } }

    /// The event as a JSON session gets it, with `"time"` added.
    func render(_ event: PanelEvent, wallMs: Int64) -> [UInt8] {
        var json: [UInt8] = []
        MessageEncoder.encode(event, names: names, format: .json, into: &json)
        while let last = json.last, last == UInt8(ascii: "\n") || last == UInt8(ascii: "\r") { json.removeLast() }
        guard json.last == UInt8(ascii: "}") else { return json }
        json.removeLast()
        json += Array(#","time":""#.utf8) + Array(RFC3339.utc(milliseconds: wallMs).utf8) + Array(#""}"#.utf8)
        return json
    }
}
