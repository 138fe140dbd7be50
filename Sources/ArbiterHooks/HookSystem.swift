import ArbiterCore
import ArbiterIO
import ArbiterWire

/// Every hook of the server: built from the config at start, with the store beside the
/// journal when there is one (pending deliveries then outlive a restart; without one
/// they live in memory only).
public final class HookSystem: @unchecked Sendable {
    public let panels: [String: PanelHooks]
    public let runners: [HookRunner]
    public let store: HookStore?

    /// nil when no panel has a hook.
    public static func make(
        panels: [PanelConfig], journalPath: String?, clock: any TimeSource, log: HookLog,
        sender: ((HookURL) -> any HookSender)? = nil, policy: HookOutbox.Policy? = nil
    ) throws -> HookSystem? {
        guard panels.contains(where: { !$0.hooks.isEmpty }) else { return nil }
        let store = try journalPath.map { try HookStore(path: $0 + ".hooks", log: log) }
        let ids = WebhookID.random()
        var byPanel: [String: PanelHooks] = [:]
        var all: [HookRunner] = []
        for panel in panels where !panel.hooks.isEmpty {
            var runners: [HookRunner] = []
            for (i, hook) in panel.hooks.enumerated() {
                guard case .success(let url) = HookURL.parse(hook.url) else { continue }
                runners.append(
                    HookRunner(
                        panel: panel.id, index: i, config: hook, url: url, sender: sender?(url) ?? hookSender(for: url), clock: clock, store: store,
                        log: log, policy: policy))
            }
            byPanel[panel.id] = PanelHooks(config: panel, runners: runners, ids: ids, store: store)
            all += runners
        }
        let system = HookSystem(panels: byPanel, runners: all, store: store)
        system.reload(clock: clock, log: log)
        return system
    }

    init(panels: [String: PanelHooks], runners: [HookRunner], store: HookStore?) {
        self.panels = panels
        self.runners = runners
        self.store = store
    }

    /// Hands the store's undelivered events back to their hooks, same id, same body. A hook
    /// is matched by panel, index and URL: one whose config changed gets none.
    private func reload(clock: any TimeSource, log: HookLog) {
        guard let store else { return }
        let wall = clock.wallMilliseconds()
        var unmatched = 0
        var byRunner: [String: (runner: HookRunner, items: [HookDelivery], ages: [Int64])] = [:]
        for runner in runners { byRunner[runner.key] = (runner, [], []) }
        for p in store.loaded {
            guard let entry = byRunner[p.hook], entry.runner.config.url == p.url else {
                unmatched += 1
                store.done(hook: p.hook, id: p.delivery.id)
                continue
            }
            byRunner[p.hook]?.items.append(p.delivery)
            byRunner[p.hook]?.ages.append(max(0, wall - p.delivery.createdWallMs) * 1_000_000)
        }
        for (_, entry) in byRunner where !entry.items.isEmpty {
            log.write(.info, "hook deliveries resumed after a restart", ["hook": entry.runner.key, "pending": "\(entry.items.count)"])
            entry.runner.submit(entry.items, ageNs: entry.ages)
        }
        if unmatched > 0 {
            log.write(.warning, "undelivered hook events dropped: their hook is no longer in the config", ["events": "\(unmatched)"])
        }
    }

    public func start() { for runner in runners { runner.start() } }

    public func stop() { for runner in runners { runner.stop() } }
}
