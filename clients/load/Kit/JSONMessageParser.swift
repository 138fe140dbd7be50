/// Reads one server message in JSON form (`{"type":"pressed","panel":"demo",...}`) into
/// a `WireMessage`, scanning bytes without building a JSON tree.
///
/// Server messages are flat objects of strings, numbers and booleans (PROTOCOL.md
/// section 3), which is all this accepts; anything nested makes the message `.unknown`.
public enum JSONMessageParser {
    public static func parse(_ bytes: UnsafeBufferPointer<UInt8>, _ object: Range<Int>, buttons: ButtonTable?) -> WireMessage {
        var m = WireMessage()
        var i = object.lowerBound
        let end = object.upperBound
        skipSpace(bytes, &i, end)
        guard i < end, bytes[i] == UInt8(ascii: "{") else { return m }
        i += 1
        var isOK = false
        var re: Range<Int>?
        var group: Range<Int>?
        while true {
            skipSpace(bytes, &i, end)
            guard i < end else { return WireMessage() }
            if bytes[i] == UInt8(ascii: "}") { break }
            if bytes[i] == UInt8(ascii: ",") {
                i += 1
                continue
            }
            guard let key = string(bytes, &i, end) else { return WireMessage() }
            skipSpace(bytes, &i, end)
            guard i < end, bytes[i] == UInt8(ascii: ":") else { return WireMessage() }
            i += 1
            skipSpace(bytes, &i, end)
            guard i < end else { return WireMessage() }
            let value: Range<Int>
            var quoted = false
            if bytes[i] == UInt8(ascii: "\"") {
                quoted = true
                guard let s = string(bytes, &i, end) else { return WireMessage() }
                value = s
            } else {
                let start = i
                while i < end {
                    let c = bytes[i]
                    if c == UInt8(ascii: ",") || c == UInt8(ascii: "}") || c == 0x20 { break }
                    if c == UInt8(ascii: "{") || c == UInt8(ascii: "[") { return WireMessage() }
                    i += 1
                }
                value = start..<i
            }
            // null is an absent value (a free button's `"owner":null`): the field keeps its default.
            if !quoted, ByteText.equals(bytes, value, "null") { continue }
            if ByteText.equals(bytes, key, "type") {
                if ByteText.equals(bytes, value, "ok") {
                    isOK = true
                } else {
                    m.kind = typeKind(bytes, value)
                }
            } else if ByteText.equals(bytes, key, "re") {
                re = value
            } else if ByteText.equals(bytes, key, "code") {
                m.error = WireErrorCode.decode(bytes, value)
            } else if ByteText.equals(bytes, key, "button") {
                if let table = buttons { m.button = table.index(bytes, value) }
            } else if ByteText.equals(bytes, key, "group") {
                group = value
            } else {
                LineMessageParser.field(bytes, key, value, into: &m)
            }
        }
        if isOK {
            m.kind = re.map { LineMessageParser.okKind(bytes, $0) } ?? .okOther
        }
        if m.kind == .error, m.error == .unavailable {
            m.mayHaveBeenDone = ByteText.contains(bytes, object, WireMessage.mayHaveBeenDoneText)
        }
        if m.kind == .queued, m.seq >= 0 { m.kind = .queuedEvent }
        // Only ARMED, CLOSED and ROUND name a group in place of a button (BUTTON's is a field).
        if m.kind == .armed || m.kind == .closed || m.kind == .roundState, let group, let table = buttons { m.group = table.groupIndex(bytes, group) }
        return m
    }

    @inline(__always)
    static func skipSpace(_ bytes: UnsafeBufferPointer<UInt8>, _ i: inout Int, _ end: Int) {
        while i < end, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 { i += 1 }
    }

    /// A string's contents (escapes left as they are), with `i` moved past its quote.
    @inline(__always)
    static func string(_ bytes: UnsafeBufferPointer<UInt8>, _ i: inout Int, _ end: Int) -> Range<Int>? {
        guard i < end, bytes[i] == UInt8(ascii: "\"") else { return nil }
        i += 1
        let start = i
        while i < end {
            let c = bytes[i]
            if c == UInt8(ascii: "\\") {
                i += 2
                continue
            }
            if c == UInt8(ascii: "\"") {
                let range = start..<i
                i += 1
                return range
            }
            i += 1
        }
        return nil
    }

    static func typeKind(_ bytes: UnsafeBufferPointer<UInt8>, _ type: Range<Int>) -> MessageKind {
        guard let first = type.first.map({ bytes[$0] }) else { return .unknown }
        switch first {
        case UInt8(ascii: "p") where ByteText.equals(bytes, type, "pressed"): return .pressed
        case UInt8(ascii: "p") where ByteText.equals(bytes, type, "progress"): return .progress
        case UInt8(ascii: "p") where ByteText.equals(bytes, type, "pong"): return .pong
        case UInt8(ascii: "p") where ByteText.equals(bytes, type, "panel"): return .panelInfo
        case UInt8(ascii: "f") where ByteText.equals(bytes, type, "fired"): return .fired
        case UInt8(ascii: "r") where ByteText.equals(bytes, type, "released"): return .released
        case UInt8(ascii: "r") where ByteText.equals(bytes, type, "record"): return .record
        case UInt8(ascii: "g") where ByteText.equals(bytes, type, "granted"): return .granted
        case UInt8(ascii: "d") where ByteText.equals(bytes, type, "denied"): return .denied
        case UInt8(ascii: "m") where ByteText.equals(bytes, type, "midway"): return .midway
        case UInt8(ascii: "t") where ByteText.equals(bytes, type, "tapped"): return .tapped
        case UInt8(ascii: "s") where ByteText.equals(bytes, type, "started"): return .started
        case UInt8(ascii: "s") where ByteText.equals(bytes, type, "stopped"): return .stopped
        case UInt8(ascii: "c") where ByteText.equals(bytes, type, "cancelled"): return .cancelled
        case UInt8(ascii: "j") where ByteText.equals(bytes, type, "joined"): return .joined
        case UInt8(ascii: "l") where ByteText.equals(bytes, type, "left"): return .left
        case UInt8(ascii: "p") where ByteText.equals(bytes, type, "presence"): return .presence
        case UInt8(ascii: "q") where ByteText.equals(bytes, type, "queued"): return .queued
        case UInt8(ascii: "w") where ByteText.equals(bytes, type, "waiting"): return .groupState
        case UInt8(ascii: "r") where ByteText.equals(bytes, type, "round"): return .roundState
        case UInt8(ascii: "r") where ByteText.equals(bytes, type, "rank"): return .rankState
        case UInt8(ascii: "r") where ByteText.equals(bytes, type, "ranked"): return .ranked
        case UInt8(ascii: "d") where ByteText.equals(bytes, type, "dequeued"): return .dequeued
        case UInt8(ascii: "a") where ByteText.equals(bytes, type, "armed"): return .armed
        case UInt8(ascii: "b") where ByteText.equals(bytes, type, "buzzed"): return .buzzed
        case UInt8(ascii: "c") where ByteText.equals(bytes, type, "closed"): return .closed
        case UInt8(ascii: "b") where ByteText.equals(bytes, type, "button"): return .button
        case UInt8(ascii: "w") where ByteText.equals(bytes, type, "welcome"): return .welcome
        case UInt8(ascii: "e") where ByteText.equals(bytes, type, "error"): return .error
        case UInt8(ascii: "h") where ByteText.equals(bytes, type, "help"): return .help
        default: return .unknown
        }
    }
}
