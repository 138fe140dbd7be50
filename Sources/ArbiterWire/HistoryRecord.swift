import ArbiterCore

/// One journal record: a grant, fire or release (and the talk events), with wall time.
///
/// Kept as ordered fields rather than as a `PanelEvent` so records written by an
/// older configuration (a button since removed) still load and still print.
public struct HistoryRecord: Sendable, Equatable {
    public enum Value: Sendable, Equatable {
        case string(String)
        case int(Int64)
        /// Only for values above Int64.max (fences and seqs are UInt64); anything that
        /// fits is `.int`, so a record reads back equal to the one written.
        case unsigned(UInt64)
        case bool(Bool)

        /// A fence or seq, in the one form equal values share.
        public static func number(_ value: UInt64) -> Value {
            value <= UInt64(Int64.max) ? .int(Int64(value)) : .unsigned(value)
        }
    }

    public var panel: String
    public var button: String
    /// The event's verb, lowercased: `pressed`, `fired`, `released`, ...
    public var event: String
    /// Wall-clock time, Unix milliseconds.
    public var at: Int64
    /// The event's own `key=value`s, in wire order.
    public var fields: [(name: String, value: Value)]

    public init(panel: String, button: String, event: String, at: Int64, fields: [(name: String, value: Value)]) {
        self.panel = panel
        self.button = button
        self.event = event
        self.at = at
        self.fields = fields
    }

    public static func == (a: HistoryRecord, b: HistoryRecord) -> Bool {
        a.panel == b.panel && a.button == b.button && a.event == b.event && a.at == b.at
            && a.fields.count == b.fields.count && zip(a.fields, b.fields).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }

    public var fence: UInt64? {
        for f in fields where f.name == "fence" {
            switch f.value {
            case .int(let v) where v >= 0: return UInt64(v)
            case .unsigned(let v): return v
            default: return nil
            }
        }
        return nil
    }

    /// Which events are journaled: ownership and actions, not presence or progress.
    public static func isJournaled(_ kind: PanelEvent.Kind) -> Bool {
        switch kind {
        case .pressed, .fired, .released, .tapped, .started, .stopped, .cancelled: true
        case .queued, .dequeued, .armed, .buzzed, .closed: true
        case .progress, .midway, .joined, .left, .presence: false
        }
    }

    /// The record of a journaled event; nil for events that are not journaled.
    public init?(event: PanelEvent, panel: PanelConfig, at: Int64) {
        guard HistoryRecord.isJournaled(event.kind) else { return nil }
        var sink = RecordFieldSink()
        MessageEncoder.describe(event, panel: panel, into: &sink, fieldsOnly: true)
        // A group's event (ARMED, CLOSED) is about no one button: `-`, and a group field.
        let button = event.button.map { panel.buttons[$0].id } ?? "-"
        self.init(panel: panel.id, button: button, event: sink.verb, at: at, fields: sink.fields)
    }

    /// Reads a journal line (the JSON form of `RECORD`); nil if it is not one.
    public init?(json: JSONValue) {
        guard case .object(let members) = json,
            json["type"]?.string == "record",
            let panel = json["panel"]?.string, let button = json["button"]?.string,
            let event = json["event"]?.string, let at = json["at"]?.integer
        else { return nil }
        var fields: [(name: String, value: Value)] = []
        for (name, value) in members where !["type", "panel", "button", "event", "at"].contains(name) {
            switch value {
            case .string(let s): fields.append((name, .string(s)))
            case .bool(let b): fields.append((name, .bool(b)))
            case .number(let n):
                if let i = Int64(n) {
                    fields.append((name, .int(i)))
                } else if let u = value.unsignedInteger {
                    fields.append((name, .unsigned(u)))
                } else {
                    return nil
                }
            default: return nil
            }
        }
        self.init(panel: panel, button: button, event: event, at: at, fields: fields)
    }
}

/// Collects an event's verb and fields instead of writing bytes.
struct RecordFieldSink: MessageSink {
    var out: [UInt8] = []
    var verb = ""
    var fields: [(name: String, value: HistoryRecord.Value)] = []

    mutating func begin(_ verb: StaticString, _ type: StaticString) { self.verb = type.description }
    mutating func beginOK(_ verb: StaticString, _ re: StaticString) {}
    mutating func beginOK(verb: String) {}
    mutating func arg(_ name: StaticString, _ value: String) {}
    mutating func string(_ name: StaticString, _ value: String) { fields.append((name.description, .string(value))) }
    mutating func quoted(_ name: StaticString, _ value: String) { string(name, value) }
    // Records are events, which always name their owner; an absent one is left out.
    mutating func optionalName(_ name: StaticString, _ value: String?) { if let value { string(name, value) } }
    mutating func int(_ name: StaticString, _ value: Int64) { fields.append((name.description, .int(value))) }
    mutating func unsigned(_ name: StaticString, _ value: UInt64) { fields.append((name.description, .number(value))) }
    mutating func bool(_ name: StaticString, _ value: Bool) { fields.append((name.description, .bool(value))) }
    mutating func decimal(_ name: StaticString, permille: Int) { fields.append((name.description, .int(Int64(permille)))) }
    mutating func rest(_ name: StaticString, _ value: String) { string(name, value) }
    mutating func end(id: CommandID?) {}
    mutating func dynamicString(_ name: String, _ value: String) { fields.append((name, .string(value))) }
    mutating func dynamicInt(_ name: String, _ value: Int64) { fields.append((name, .int(value))) }
    mutating func dynamicUnsigned(_ name: String, _ value: UInt64) { fields.append((name, .number(value))) }
    mutating func dynamicBool(_ name: String, _ value: Bool) { fields.append((name, .bool(value))) }
}
