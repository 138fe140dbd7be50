import ArbiterWire

/// One `BUTTON` line of a JOIN snapshot, read the slow way (Strings): snapshots come
/// once per member at setup and once at the end, never on the hot path.
public struct SnapshotButton: Sendable, Equatable {
    public var id: String
    public var kind: PanelButtonKind
    public var group: String
    public var state: ButtonState
    public var policy: LoadGroupPolicy

    public init(id: String, kind: PanelButtonKind, group: String, state: ButtonState = .idle, policy: LoadGroupPolicy = .exclusive) {
        self.id = id
        self.kind = kind
        self.group = group
        self.state = state
        self.policy = policy
    }

    /// Parses `BUTTON <p> <b> kind=<k> group=<g> state=<s> ...` or its JSON form.
    public static func parse(_ bytes: [UInt8]) -> SnapshotButton? {
        var fields: [String: String] = [:]
        if bytes.first == UInt8(ascii: "{") {
            guard case .object(let members)? = try? JSONParser.parse(bytes) else { return nil }
            for (key, value) in members {
                if case .string(let s) = value { fields[key] = s }
            }
        } else {
            let words = String(decoding: bytes, as: UTF8.self).split(separator: " ")
            guard words.count >= 3, words[0] == "BUTTON" else { return nil }
            fields["button"] = String(words[2])
            for word in words.dropFirst(3) {
                guard let eq = word.firstIndex(of: "=") else { continue }
                fields[String(word[..<eq])] = String(word[word.index(after: eq)...])
            }
        }
        guard let id = fields["button"], let kindWord = fields["kind"], let kind = PanelButtonKind(word: kindWord),
            let group = fields["group"]
        else { return nil }
        let state: ButtonState =
            switch fields["state"] {
            case "idle": .idle
            case "pressed": .pressed
            case "locked": .locked
            default: .unknown
            }
        let policy = fields["policy"].flatMap(LoadGroupPolicy.init(rawValue:)) ?? .exclusive
        return SnapshotButton(id: id, kind: kind, group: group, state: state, policy: policy)
    }
}
