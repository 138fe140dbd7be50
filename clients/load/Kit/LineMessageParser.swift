/// Reads one text line from the server (`VERB arg... key=value...`) into a
/// `WireMessage`, byte by byte, without allocating.
public enum LineMessageParser {
    /// - Parameters:
    ///   - line: the line's bytes without its `\n` (a trailing `\r` is ignored).
    ///   - buttons: resolves button ids; nil before the first snapshot (ids stay -1).
    public static func parse(_ bytes: UnsafeBufferPointer<UInt8>, _ line: Range<Int>, buttons: ButtonTable?) -> WireMessage {
        var end = line.upperBound
        if end > line.lowerBound, bytes[end - 1] == 0x0D { end -= 1 }
        var m = WireMessage()
        var i = line.lowerBound
        guard let verb = nextToken(bytes, &i, end) else { return m }
        var positionalBase = 0
        if ByteText.equals(bytes, verb, "OK") {
            guard let sub = nextToken(bytes, &i, end) else { m.kind = .okOther; return m }
            m.kind = okKind(bytes, sub)
        } else {
            m.kind = verbKind(bytes, verb)
        }
        switch m.kind {
        case .error:
            // `ERROR <code> <free text>`: only the code is read.
            m.error = nextToken(bytes, &i, end).map { WireErrorCode.decode(bytes, $0) } ?? .other
            if m.error == .unavailable { m.mayHaveBeenDone = ByteText.contains(bytes, i..<end, WireMessage.mayHaveBeenDoneText) }
            return m
        case .help, .record, .panelInfo, .unknown, .pong, .groupState:
            // Free text follows; nothing in it is needed.
            return m
        default:
            break
        }
        while let token = nextToken(bytes, &i, end) {
            var eq = -1
            for j in token where bytes[j] == UInt8(ascii: "=") {
                eq = j
                break
            }
            if eq < 0 {
                // Positional: the panel, then the button (ARMED, CLOSED and ROUND: the group).
                if positionalBase == 1, let table = buttons {
                    if m.kind == .armed || m.kind == .closed || m.kind == .roundState {
                        m.group = table.groupIndex(bytes, token)
                    } else {
                        m.button = table.index(bytes, token)
                    }
                }
                positionalBase += 1
                continue
            }
            var value = (eq + 1)..<token.upperBound
            if value.lowerBound < token.upperBound, bytes[value.lowerBound] == UInt8(ascii: "\"") {
                value = (value.lowerBound + 1)..<max(value.lowerBound + 1, token.upperBound - 1)
            }
            field(bytes, token.lowerBound..<eq, value, into: &m)
        }
        if m.kind == .queued, m.seq >= 0 { m.kind = .queuedEvent }
        return m
    }

    /// The next space-separated token; a `"` opens a quoted stretch that may hold spaces.
    @inline(__always)
    static func nextToken(_ bytes: UnsafeBufferPointer<UInt8>, _ i: inout Int, _ end: Int) -> Range<Int>? {
        while i < end, bytes[i] == 0x20 { i += 1 }
        guard i < end else { return nil }
        let start = i
        var quoted = false
        while i < end {
            let c = bytes[i]
            if quoted {
                if c == UInt8(ascii: "\\") { i += 1 } else if c == UInt8(ascii: "\"") { quoted = false }
            } else if c == UInt8(ascii: "\"") {
                quoted = true
            } else if c == 0x20 {
                break
            }
            i += 1
        }
        return start..<min(i, end)
    }

    @inline(__always)
    static func field(_ bytes: UnsafeBufferPointer<UInt8>, _ key: Range<Int>, _ value: Range<Int>, into m: inout WireMessage) {
        guard let first = key.first.map({ bytes[$0] }) else { return }
        switch first {
        case UInt8(ascii: "f") where ByteText.equals(bytes, key, "fence"):
            m.fence = ByteText.integer(bytes, value) ?? -1
        case UInt8(ascii: "s") where ByteText.equals(bytes, key, "seq"):
            m.seq = ByteText.integer(bytes, value) ?? -1
        case UInt8(ascii: "s") where ByteText.equals(bytes, key, "session"):
            m.session = ByteText.session(bytes, value)
        case UInt8(ascii: "s") where ByteText.equals(bytes, key, "state"):
            m.state = state(bytes, value)
            if m.state == .unknown { m.round = round(bytes, value) }
        case UInt8(ascii: "o") where ByteText.equals(bytes, key, "owner"):
            m.owner = ByteText.equals(bytes, value, "-") ? -1 : ByteText.nameCode(bytes, value)
        case UInt8(ascii: "n") where ByteText.equals(bytes, key, "name"):
            m.owner = ByteText.nameCode(bytes, value)
        case UInt8(ascii: "r") where ByteText.equals(bytes, key, "reason"),
            UInt8(ascii: "e") where ByteText.equals(bytes, key, "ended"):
            m.reason = ReasonCode.decode(bytes, value)
        case UInt8(ascii: "v") where ByteText.equals(bytes, key, "value"):
            m.permille = ByteText.permille(bytes, value)
        case UInt8(ascii: "h") where ByteText.equals(bytes, key, "held_ms"):
            m.heldMs = ByteText.integer(bytes, value) ?? -1
        case UInt8(ascii: "d") where ByteText.equals(bytes, key, "discarded"):
            m.discarded = ByteText.equals(bytes, value, "true")
        case UInt8(ascii: "m") where ByteText.equals(bytes, key, "members"):
            m.members = ByteText.integer(bytes, value) ?? -1
        case UInt8(ascii: "p") where ByteText.equals(bytes, key, "position"):
            m.position = Int32(clamping: ByteText.integer(bytes, value) ?? -1)
        case UInt8(ascii: "r") where ByteText.equals(bytes, key, "rank"):
            m.rank = Int32(clamping: ByteText.integer(bytes, value) ?? -1)
        case UInt8(ascii: "a") where ByteText.equals(bytes, key, "after_us"):
            m.afterUs = ByteText.integer(bytes, value) ?? -1
        case UInt8(ascii: "t") where ByteText.equals(bytes, key, "term"):
            m.term = ByteText.integer(bytes, value) ?? -1
        default:
            break
        }
    }

    static func state(_ bytes: UnsafeBufferPointer<UInt8>, _ value: Range<Int>) -> ButtonState {
        if ByteText.equals(bytes, value, "idle") { return .idle }
        if ByteText.equals(bytes, value, "pressed") { return .pressed }
        if ByteText.equals(bytes, value, "locked") { return .locked }
        return .unknown
    }

    static func round(_ bytes: UnsafeBufferPointer<UInt8>, _ value: Range<Int>) -> RoundState {
        if ByteText.equals(bytes, value, "closed") { return .closed }
        if ByteText.equals(bytes, value, "armed") { return .armed }
        if ByteText.equals(bytes, value, "won") { return .won }
        return .unknown
    }

    static func verbKind(_ bytes: UnsafeBufferPointer<UInt8>, _ verb: Range<Int>) -> MessageKind {
        switch bytes[verb.lowerBound] {
        case UInt8(ascii: "P") where ByteText.equals(bytes, verb, "PRESSED"): .pressed
        case UInt8(ascii: "P") where ByteText.equals(bytes, verb, "PROGRESS"): .progress
        case UInt8(ascii: "P") where ByteText.equals(bytes, verb, "PONG"): .pong
        case UInt8(ascii: "P") where ByteText.equals(bytes, verb, "PANEL"): .panelInfo
        case UInt8(ascii: "F") where ByteText.equals(bytes, verb, "FIRED"): .fired
        case UInt8(ascii: "R") where ByteText.equals(bytes, verb, "RELEASED"): .released
        case UInt8(ascii: "R") where ByteText.equals(bytes, verb, "RECORD"): .record
        case UInt8(ascii: "G") where ByteText.equals(bytes, verb, "GRANTED"): .granted
        case UInt8(ascii: "D") where ByteText.equals(bytes, verb, "DENIED"): .denied
        case UInt8(ascii: "M") where ByteText.equals(bytes, verb, "MIDWAY"): .midway
        case UInt8(ascii: "T") where ByteText.equals(bytes, verb, "TAPPED"): .tapped
        case UInt8(ascii: "S") where ByteText.equals(bytes, verb, "STARTED"): .started
        case UInt8(ascii: "S") where ByteText.equals(bytes, verb, "STOPPED"): .stopped
        case UInt8(ascii: "C") where ByteText.equals(bytes, verb, "CANCELLED"): .cancelled
        case UInt8(ascii: "J") where ByteText.equals(bytes, verb, "JOINED"): .joined
        case UInt8(ascii: "L") where ByteText.equals(bytes, verb, "LEFT"): .left
        case UInt8(ascii: "P") where ByteText.equals(bytes, verb, "PRESENCE"): .presence
        case UInt8(ascii: "Q") where ByteText.equals(bytes, verb, "QUEUED"): .queued
        case UInt8(ascii: "W") where ByteText.equals(bytes, verb, "WAITING"): .groupState
        case UInt8(ascii: "R") where ByteText.equals(bytes, verb, "ROUND"): .roundState
        case UInt8(ascii: "R") where ByteText.equals(bytes, verb, "RANK"): .rankState
        case UInt8(ascii: "R") where ByteText.equals(bytes, verb, "RANKED"): .ranked
        case UInt8(ascii: "D") where ByteText.equals(bytes, verb, "DEQUEUED"): .dequeued
        case UInt8(ascii: "A") where ByteText.equals(bytes, verb, "ARMED"): .armed
        case UInt8(ascii: "B") where ByteText.equals(bytes, verb, "BUZZED"): .buzzed
        case UInt8(ascii: "C") where ByteText.equals(bytes, verb, "CLOSED"): .closed
        case UInt8(ascii: "B") where ByteText.equals(bytes, verb, "BUTTON"): .button
        case UInt8(ascii: "W") where ByteText.equals(bytes, verb, "WELCOME"): .welcome
        case UInt8(ascii: "E") where ByteText.equals(bytes, verb, "ERROR"): .error
        case UInt8(ascii: "#"): .help
        default: .unknown
        }
    }

    static func okKind(_ bytes: UnsafeBufferPointer<UInt8>, _ verb: Range<Int>) -> MessageKind {
        // The same words lowercased are JSON's `re`; compare case-insensitively once.
        var upper: UInt64 = 0
        guard verb.count <= 8 else { return .okOther }
        for j in verb { upper = upper << 8 | UInt64(bytes[j] & 0xDF) }
        switch upper {
        case 0x5550: return .okUp  // UP
        case 0x4A4F_494E: return .okJoin  // JOIN
        case 0x4845_4C4C_4F: return .okHello  // HELLO
        case 0x4C45_4156_45: return .okLeave  // LEAVE
        case 0x4341_4E43_454C: return .okCancel  // CANCEL
        case 0x5155_4954: return .okQuit  // QUIT
        case 0x42_5945: return .okBye  // BYE
        default: return .okOther
        }
    }
}
