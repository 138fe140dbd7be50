import ArbiterCore
import ArbiterIO
import ArbiterWire

/// Every hook of the server: built from the config at start, with the store beside the
/// journal when there is one (pending deliveries then outlive a restart; without one
/// they live in memory only), or, in a cluster, the store the cluster gives (etcd: a
/// panel's pending deliveries are resumed by whichever node leads it next).
public final class HookSystem: @unchecked Sendable {
    public let panels: [String: PanelHooks]
    public let runners: [HookRunner]
    public let store: (any HookPersistence)?

    /// nil when no panel has a hook. With `persistence`, nothing is reloaded here: each
    /// panel resumes its own when this node starts leading it (`PanelHooks.resume`).
    public static func make(
        panels: [PanelConfig], journalPath: String?, persistence: (any HookPersistence)? = nil, clock: any TimeSource, log: HookLog,
        sender: ((HookURL) -> any HookSender)? = nil, policy: HookOutbox.Policy? = nil
    ) throws -> HookSystem? {
        guard panels.contains(where: { !$0.hooks.isEmpty }) else { return nil }
        let file = persistence == nil ? try journalPath.map { try HookStore(path: $0 + ".hooks", log: log) } : nil
        let store: (any HookPersistence)? = persistence ?? file
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
        if let file { system.reload(file, clock: clock, log: log) }
        return system
    }

    init(panels: [String: PanelHooks], runners: [HookRunner], store: (any HookPersistence)?) {
        self.panels = panels
        self.runners = runners
        self.store = store
    }

    /// Hands the file's undelivered events back to their hooks (`PanelHooks.resume`).
    private func reload(_ file: HookStore, clock: any TimeSource, log: HookLog) {
        let wall = clock.wallMilliseconds()
        var byPanel: [String: [HookStore.Pending]] = [:]
        var owner: [String: String] = [:]
        for (panel, hooks) in panels { for runner in hooks.runners { owner[runner.key] = panel } }
        var unmatched = 0
        for p in file.loaded {
            guard let panel = owner[p.hook] else {
                unmatched += 1
                file.done(hook: p.hook, id: p.delivery.id)
                continue
            }
            byPanel[panel, default: []].append(p)
        }
        for (panel, pending) in byPanel {
            unmatched += panels[panel]?.resume(pending, wallMs: wall, log: log, why: "hook deliveries resumed after a restart") ?? 0
        }
        if unmatched > 0 {
            log.write(.warning, "undelivered hook events dropped: their hook is no longer in the config", ["events": "\(unmatched)"])
        }
    }

    public func start() { for runner in runners { runner.start() } }

    public func stop() { for runner in runners { runner.stop() } }
}
