import ArbiterCore

/// A panel's `hooks` (docs/GUIDE.md, "Webhooks"), checked as strictly as the rest of the
/// config. The secret file is named here and read by the loader, which has the file system.
enum HookConfigDecoder {
    static let maxHooks = 16
    static let fields = ["url", "events", "buttons", "secret_file", "timeout_ms", "max_age_s", "max_pending", "ca_file"]

    static func hooks(_ v: JSONValue?, _ path: String, buttons: [ButtonConfig]) throws(ConfigDecoder.Failure) -> [HookConfig] {
        guard let v else { return [] }
        guard case .array(let items) = v else { throw fail(path, "must be an array, not \(v.typeName)") }
        guard items.count <= maxHooks else { throw fail(path, "must list at most \(maxHooks) hooks") }
        var result: [HookConfig] = []
        for (i, item) in items.enumerated() { result.append(try hook(item, "\(path)[\(i)]", buttons: buttons)) }
        return result
    }

    private static func fail(_ path: String, _ reason: String) -> ConfigDecoder.Failure { ConfigDecoder.Failure(path: path, reason: reason) }

    private static func hook(_ v: JSONValue, _ path: String, buttons: [ButtonConfig]) throws(ConfigDecoder.Failure) -> HookConfig {
        guard case .object(let members) = v else { throw fail(path, "must be an object, not \(v.typeName)") }
        var seen: Set<String> = []
        for (key, _) in members {
            guard fields.contains(key) else { throw fail(path, "unknown field \"\(key)\" (known: \(fields.joined(separator: ", ")))") }
            guard seen.insert(key).inserted else { throw fail(path, "field \"\(key)\" appears twice") }
        }
        guard case .string(let url)? = v["url"] else { throw fail("\(path).url", "is required and must be a string") }
        if case .failure(let why) = HookURL.parse(url) { throw fail("\(path).url", "\(why.reason), not \"\(url)\"") }
        var hook = HookConfig(url: url)
        if let events = v["events"] {
            let names = try strings(events, "\(path).events")
            for (i, name) in names.enumerated() where !HookConfig.eventNames.contains(name) {
                throw fail("\(path).events[\(i)]", "unknown event \"\(name)\" (known: \(HookConfig.eventNames.joined(separator: " ")))")
            }
            hook.events = names
        }
        if let list = v["buttons"] {
            var indexes: [Int] = []
            for (i, id) in try strings(list, "\(path).buttons").enumerated() {
                guard let index = buttons.firstIndex(where: { $0.id == id }) else { throw fail("\(path).buttons[\(i)]", "no button \"\(id)\" on this panel") }
                indexes.append(index)
            }
            hook.buttons = indexes
        }
        if let file = v["secret_file"] {
            guard case .string(let name) = file, !name.isEmpty else { throw fail("\(path).secret_file", "must be a file name") }
            hook.secretFile = name
        }
        if v["ca_file"] != nil {
            // FoundationNetworking on Linux trusts only the system's CA bundle: it offers
            // neither a per-request CA file nor a trust callback.
            throw fail(
                "\(path).ca_file",
                "is not supported: the TLS client trusts the system's CAs only; add a private CA to them (update-ca-certificates)")
        }
        hook.timeoutMs = try number(v["timeout_ms"], "\(path).timeout_ms", 1...600_000) ?? hook.timeoutMs
        hook.maxAgeS = try number(v["max_age_s"], "\(path).max_age_s", 1...2_592_000) ?? hook.maxAgeS
        hook.maxPending = Int(try number(v["max_pending"], "\(path).max_pending", 1...1_000_000) ?? Int64(hook.maxPending))
        return hook
    }

    private static func strings(_ v: JSONValue, _ path: String) throws(ConfigDecoder.Failure) -> [String] {
        guard case .array(let items) = v, !items.isEmpty else { throw fail(path, "must be a non-empty array of strings") }
        var result: [String] = []
        for (i, item) in items.enumerated() {
            guard case .string(let s) = item else { throw fail("\(path)[\(i)]", "must be a string, not \(item.typeName)") }
            guard !result.contains(s) else { throw fail("\(path)[\(i)]", "\"\(s)\" is listed twice") }
            result.append(s)
        }
        return result
    }

    private static func number(_ v: JSONValue?, _ path: String, _ range: ClosedRange<Int64>) throws(ConfigDecoder.Failure) -> Int64? {
        guard let v else { return nil }
        guard let n = v.integer else { throw fail(path, "must be a whole number, not \(v.typeName)") }
        guard range.contains(n) else { throw fail(path, "must be between \(range.lowerBound) and \(range.upperBound), not \(n)") }
        return n
    }
}
