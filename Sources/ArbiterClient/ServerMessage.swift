import Foundation

/// One line from the server in its JSON form (`{"type":"pressed","panel":"demo",...}`),
/// its fields as the wire has them. The client asks for the JSON form because its replies
/// carry the command's `id`: a queue's unsolicited `GRANTED` or a cluster's pushed
/// snapshot can never be mistaken for the answer to a command, as they could in text.
struct ServerMessage: Sendable, Equatable {
    /// A field's value. Numbers keep their exact integer when they have one: fences go up
    /// to 2^64-1, which a `Double` cannot hold.
    enum Value: Sendable, Equatable, Decodable {
        case string(String)
        case unsigned(UInt64)
        case signed(Int64)
        case number(Double)
        case bool(Bool)
        case null
        /// An object or an array: the protocol sends none, so a reader never needs one.
        case other

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() {
                self = .null
            } else if let value = try? container.decode(Bool.self) {
                self = .bool(value)
            } else if let value = try? container.decode(UInt64.self) {
                self = .unsigned(value)
            } else if let value = try? container.decode(Int64.self) {
                self = .signed(value)
            } else if let value = try? container.decode(Double.self) {
                self = .number(value)
            } else if let value = try? container.decode(String.self) {
                self = .string(value)
            } else {
                self = .other
            }
        }
    }

    let type: String
    let fields: [String: Value]
    /// The line as received, for `PanelEvent.unknown`.
    let line: String

    /// Nil for anything that is not a JSON object with a string `type`.
    init?(line: String) {
        guard line.first == "{", let fields = try? JSONDecoder().decode([String: Value].self, from: Data(line.utf8)),
            case .string(let type)? = fields["type"]
        else { return nil }
        self.type = type
        self.fields = fields
        self.line = line
    }

    init(type: String, fields: [String: Value], line: String = "") {
        self.type = type
        self.fields = fields
        self.line = line
    }

    var id: String? { string("id") }
    var panel: String? { string("panel") }
    var seq: UInt64? { unsigned("seq") }

    func string(_ key: String) -> String? {
        if case .string(let value)? = fields[key] { return value }
        return nil
    }

    func unsigned(_ key: String) -> UInt64? {
        if case .unsigned(let value)? = fields[key] { return value }
        return nil
    }

    func double(_ key: String) -> Double? {
        switch fields[key] {
        case .number(let value)?: return value
        case .unsigned(let value)?: return Double(value)
        case .signed(let value)?: return Double(value)
        default: return nil
        }
    }

    func bool(_ key: String) -> Bool? {
        if case .bool(let value)? = fields[key] { return value }
        return nil
    }

    /// A string that may be JSON `null` (a free button's `owner`): nil for null.
    func optionalString(_ key: String) -> String?? {
        switch fields[key] {
        case .string(let value)?: return .some(value)
        case .null?: return .some(nil)
        default: return nil
        }
    }

    /// The lines of a multi-line reply that come before its final line.
    static let partTypes: Set<String> = ["button", "waiting", "round", "rank", "record", "help", "panel"]

    var isReplyPart: Bool { Self.partTypes.contains(type) }
}
