import ArbiterCore

/// Reads the `--config` JSON (PROTOCOL.md section 8) into panels, refusing anything
/// doubtful with the path inside the file and what is wrong, so the server never
/// starts half-configured.
public enum ConfigDecoder {
    public struct Failure: Error, Equatable, CustomStringConvertible {
        /// Where in the document, e.g. `panels[0].buttons[2].kind`.
        public var path: String
        public var reason: String
        public var description: String { path.isEmpty ? reason : "\(path): \(reason)" }
    }

    public static func decode(_ bytes: [UInt8]) throws(Failure) -> [PanelConfig] {
        let root: JSONValue
        // Editors on Windows may save UTF-8 with a byte order mark; it means nothing here.
        let body = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(bytes.dropFirst(3)) : bytes
        do {
            root = try JSONParser.parse(body)
        } catch {
            let at = error.position(in: body)
            throw Failure(path: "", reason: "not valid JSON at line \(at.line), column \(at.column): \(error.reason)")
        }
        var d = Walker()
        return try d.panels(root)
    }

    private struct Walker {
        func fail(_ path: String, _ reason: String) -> Failure { Failure(path: path, reason: reason) }

        func object(_ v: JSONValue, _ path: String, allowed: [String]) throws(Failure) -> [(String, JSONValue)] {
            guard case .object(let members) = v else { throw fail(path, "must be an object, not \(v.typeName)") }
            var seen: Set<String> = []
            for (key, _) in members {
                guard allowed.contains(key) else {
                    throw fail(path, "unknown field \"\(key)\" (known: \(allowed.joined(separator: ", ")))")
                }
                guard seen.insert(key).inserted else { throw fail(path, "field \"\(key)\" appears twice") }
            }
            return members
        }

        func string(_ v: JSONValue?, _ path: String) throws(Failure) -> String? {
            guard let v else { return nil }
            guard case .string(let s) = v else { throw fail(path, "must be a string, not \(v.typeName)") }
            return s
        }

        func text(_ v: JSONValue?, _ path: String) throws(Failure) -> String? {
            guard let s = try string(v, path) else { return nil }
            guard !s.isEmpty, s.utf8.count <= 200 else { throw fail(path, "must be 1 to 200 bytes") }
            guard !s.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) else {
                throw fail(path, "must not contain control characters")
            }
            return s
        }

        func id(_ v: JSONValue?, _ path: String) throws(Failure) -> String {
            guard let s = try string(v, path) else { throw fail(path, "is required") }
            guard Identifier.isValidID(s) else { throw fail(path, "\"\(s)\" must match [A-Za-z0-9_-]{1,64}") }
            return s
        }

        func millis(_ v: JSONValue?, _ path: String, min: Int64, max: Int64 = 86_400_000) throws(Failure) -> Int64? {
            guard let v else { return nil }
            guard let n = v.integer else { throw fail(path, "must be a whole number of milliseconds, not \(v.typeName)") }
            guard n >= min, n <= max else { throw fail(path, "must be between \(min) and \(max), not \(n)") }
            return n
        }

        mutating func panels(_ root: JSONValue) throws(Failure) -> [PanelConfig] {
            let members = try object(root, "", allowed: ["panels"])
            guard let list = members.first(where: { $0.0 == "panels" })?.1 else { throw fail("panels", "is required") }
            guard case .array(let items) = list else { throw fail("panels", "must be an array") }
            guard !items.isEmpty else { throw fail("panels", "must list at least one panel") }
            var result: [PanelConfig] = []
            var ids: Set<String> = []
            for (i, item) in items.enumerated() {
                let panel = try self.panel(item, "panels[\(i)]")
                guard ids.insert(panel.id).inserted else { throw fail("panels[\(i)].id", "\"\(panel.id)\" is used twice") }
                result.append(panel)
            }
            return result
        }

        func panel(_ v: JSONValue, _ path: String) throws(Failure) -> PanelConfig {
            _ = try object(v, path, allowed: ["id", "title", "buttons", "keys", "groups", "presence_summary_above", "hooks"])
            let id = try self.id(v["id"], "\(path).id")
            let title = try text(v["title"], "\(path).title")
            guard case .array(let items)? = v["buttons"] else { throw fail("\(path).buttons", "is required and must be an array") }
            guard !items.isEmpty, items.count <= 1000 else { throw fail("\(path).buttons", "must list 1 to 1000 buttons") }
            var buttons: [ButtonConfig] = []
            var ids: Set<String> = []
            for (i, item) in items.enumerated() {
                let b = try button(item, "\(path).buttons[\(i)]")
                guard ids.insert(b.id).inserted else { throw fail("\(path).buttons[\(i)].id", "\"\(b.id)\" is used twice") }
                buttons.append(b)
            }
            var keys = PanelKeys()
            if let k = v["keys"] {
                _ = try object(k, "\(path).keys", allowed: ["view", "press", "admin"])
                keys.view = try text(k["view"], "\(path).keys.view")
                keys.press = try text(k["press"], "\(path).keys.press")
                keys.admin = try text(k["admin"], "\(path).keys.admin")
            }
            let groups = try self.groups(v["groups"], "\(path).groups", buttons: buttons, buttonsPath: "\(path).buttons")
            var summaryAbove = PanelConfig.defaultPresenceSummaryAbove
            if let m = v["presence_summary_above"] {
                guard let n = m.integer else { throw fail("\(path).presence_summary_above", "must be a whole number of members, not \(m.typeName)") }
                guard n >= 0, n <= 1_000_000 else { throw fail("\(path).presence_summary_above", "must be between 0 and 1000000, not \(n)") }
                summaryAbove = Int(n)
            }
            var config = PanelConfig(id: id, title: title, buttons: buttons, keys: keys, groups: groups, presenceSummaryAbove: summaryAbove)
            config.hooks = try HookConfigDecoder.hooks(v["hooks"], "\(path).hooks", buttons: buttons)
            return config
        }

        func groups(_ v: JSONValue?, _ path: String, buttons: [ButtonConfig], buttonsPath: String) throws(Failure) -> [String: GroupPolicy] {
            guard let v else { return [:] }
            var result: [String: GroupPolicy] = [:]
            for (name, g) in try object(v, path, allowed: Array(Set(buttons.map(\.group))).sorted()) {
                let at = "\(path).\(name)"
                let policyName = try string(g["policy"], "\(at).policy") ?? "exclusive"
                let fields: [String: [String]] = ["exclusive": [], "queue": ["max_queue"], "buzzer": ["early_lockout_ms", "announce", "decision_window_us"]]
                guard let own = fields[policyName] else {
                    throw fail("\(at).policy", "must be exclusive, queue or buzzer, not \"\(policyName)\"")
                }
                _ = try object(g, at, allowed: ["policy"] + own)
                let policy: GroupPolicy
                switch policyName {
                case "queue":
                    var max = GroupPolicy.defaultMaxQueue
                    if let m = g["max_queue"] {
                        guard let n = m.integer else { throw fail("\(at).max_queue", "must be a whole number, not \(m.typeName)") }
                        guard n >= 1, n <= 100_000 else { throw fail("\(at).max_queue", "must be between 1 and 100000, not \(n)") }
                        max = Int(n)
                    }
                    policy = .queue(maxQueue: max)
                case "buzzer":
                    var announce = GroupPolicy.defaultAnnounce
                    if let a = g["announce"] {
                        guard let n = a.integer else { throw fail("\(at).announce", "must be a whole number of places, not \(a.typeName)") }
                        guard n >= 1, n <= 100_000 else { throw fail("\(at).announce", "must be between 1 and 100000, not \(n)") }
                        announce = Int(n)
                    }
                    var window = GroupPolicy.defaultDecisionWindowUs
                    if let w = g["decision_window_us"] {
                        guard let n = w.integer else { throw fail("\(at).decision_window_us", "must be a whole number of microseconds, not \(w.typeName)") }
                        guard n >= 0, n <= 100_000 else { throw fail("\(at).decision_window_us", "must be between 0 and 100000, not \(n)") }
                        window = n
                    }
                    policy = .buzzer(
                        earlyLockoutMs: try millis(g["early_lockout_ms"], "\(at).early_lockout_ms", min: 0)
                            ?? GroupPolicy.defaultEarlyLockoutMs, announce: announce, decisionWindowUs: window)
                default:
                    policy = .exclusive
                }
                for (i, b) in buttons.enumerated() where b.group == name && !policy.fits(b.kind) {
                    throw fail("\(at).policy", "a buzzer group holds tap buttons only, and \(buttonsPath)[\(i)] (\(b.id)) is \(b.kind.rawValue)")
                }
                result[name] = policy
            }
            return result
        }

        func button(_ v: JSONValue, _ path: String) throws(Failure) -> ButtonConfig {
            let timings = ["timeout_ms", "hold_ms", "progress_ms", "long_ms", "min_talk_ms"]
            _ = try object(v, path, allowed: ["id", "label", "kind", "group"] + timings)
            let id = try self.id(v["id"], "\(path).id")
            let label = try text(v["label"], "\(path).label")
            let kindName = try string(v["kind"], "\(path).kind") ?? "tap"
            guard let kind = ButtonKind(rawValue: kindName) else { throw fail("\(path).kind", "must be tap, hold or talk, not \"\(kindName)\"") }
            let group = v["group"] == nil ? ButtonConfig.defaultGroup : try self.id(v["group"], "\(path).group")
            // A timing the kind never uses would be ignored without a word: a "hold_ms" on
            // a button whose "kind" was forgotten would make a tap button that fires at once.
            let uses: [ButtonKind: [String]] = [
                .tap: ["timeout_ms"], .hold: ["hold_ms", "progress_ms"],
                .talk: ["timeout_ms", "long_ms", "min_talk_ms"],
            ]
            for field in timings where v[field] != nil {
                guard uses[kind]!.contains(field) else {
                    let users = ButtonKind.allCases.filter { uses[$0]!.contains(field) }.map(\.rawValue).joined(separator: " and ")
                    throw fail(
                        "\(path).\(field)", "applies to \(users) buttons, and this one is \(kind.rawValue)\(v["kind"] == nil ? " (no \"kind\" given)" : "")")
                }
            }
            var b = ButtonConfig(id: id, label: label, kind: kind, group: group)
            if let t = try millis(v["timeout_ms"], "\(path).timeout_ms", min: 0) { b.timeoutMs = t }
            if let h = try millis(v["hold_ms"], "\(path).hold_ms", min: 1) { b.holdMs = h }
            if let p = try millis(v["progress_ms"], "\(path).progress_ms", min: 0) {
                guard p == 0 || p >= 10 else { throw fail("\(path).progress_ms", "must be 0 (no progress events) or at least 10") }
                b.progressMs = p
            }
            if let l = try millis(v["long_ms"], "\(path).long_ms", min: 1) { b.longMs = l }
            if let m = try millis(v["min_talk_ms"], "\(path).min_talk_ms", min: 0) { b.minTalkMs = m }
            return b
        }
    }
}
