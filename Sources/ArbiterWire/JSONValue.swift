/// A parsed JSON value. Object members keep their order; numbers keep their text so
/// an `"id"` is echoed exactly and integers are read without a detour through Double.
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.number(let a), .number(let b)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)): a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: false
        }
    }

    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.0 == key }?.1
    }

    /// The value as an exact integer, if it is a number without fraction or exponent.
    public var integer: Int64? {
        guard case .number(let text) = self else { return nil }
        return Int64(text)
    }

    /// The value as an exact unsigned integer: plain digits up to 2^64-1, as fences are.
    /// A sign, fraction or exponent, or a value past UInt64.max, is nil, never rounded.
    public var unsignedInteger: UInt64? {
        guard case .number(let text) = self, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return UInt64(text)
    }

    public var string: String? {
        guard case .string(let s) = self else { return nil }
        return s
    }

    /// A short name of the value's type, for error messages.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}
