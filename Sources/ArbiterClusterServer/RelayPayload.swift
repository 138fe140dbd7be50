import ArbiterCluster
import ArbiterServer
import ArbiterCore
import ArbiterWire

/// The contents of the relay frames' byte fields, as this server writes and reads them
/// (docs/CLUSTER.md, "Relayed commands, replies and events"):
///
/// - a `command`'s command: one byte for the form the session wants its reply in (`T`
///   text, `J` JSON), the term the sender believes the leader decides in (decimal), the
///   session's `id` if it sent one (a space, then `n` and the number as sent, or `s` and
///   the JSON string), and a newline; then the command: a press (`DOWN`, `UP`, `CANCEL`)
///   as its text line, which the leader reads with the fast line parser, any other
///   command in its JSON form. A node that does not decide the panel refuses it under
///   that term, so the refusal gets past the sender's term fencing (a refusal decides
///   nothing);
/// - a `reply`'s line: one byte saying what the follower must do besides writing it (`R`
///   nothing, `J` the session is now a member, `X` its JOIN was refused, `L` it is no
///   longer a member, `Q` it waits in a line, `N` a queue's hand-off, not an answer),
///   then the reply already written in the session's form; after `J`, the term's live
///   grants as `<button> <fence> <owner>` lines and a NUL come first, so the follower can
///   end them with `reason=failover` if the leader goes away;
/// - an `event`'s line: the event in the text form, a NUL, the event in the JSON form, so
///   the follower writes each of its members the form it reads without decoding anything.
///   `seq` 0 is the leader's own failover notice (releases and an idle snapshot), outside
///   the seq chain.
enum RelayPayload {
    static let nul: UInt8 = 0

    enum ReplyKind: UInt8 {
        case plain = 0x52  // R
        case joined = 0x4A  // J
        case left = 0x4C  // L
        case queued = 0x51  // Q
        case joinRefused = 0x58  // X
        case notice = 0x4E  // N
    }

    // MARK: Commands

    static func command(_ request: Request, format: WireFormat, id: CommandID?, term: Int64) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64)
        out.append(format == .json ? 0x4A : 0x54)
        Bytes.appendDecimal(UInt64(clamping: term), to: &out)
        switch id {
        case .number(let n)?:
            out.append(contentsOf: " n".utf8)
            out.append(contentsOf: n.utf8)
        case .string(let s)?:
            out.append(contentsOf: " s".utf8)
            JSONString.append(s, to: &out)
        case nil:
            break
        }
        out.append(0x0A)
        if case .press(let press) = request {
            // The press path: a text line is read by the fast line parser, a JSON object by
            // the general JSON parser at several times the cost (ids are valid identifiers,
            // so the line needs no quoting).
            out.append(contentsOf: press.verb.rawValue.utf8)
            out.append(0x20)
            out.append(contentsOf: press.panel.utf8)
            out.append(0x20)
            out.append(contentsOf: press.button.utf8)
            if let fence = press.fence {
                out.append(contentsOf: " fence=".utf8)
                Bytes.appendDecimal(fence, to: &out)
            }
            return out
        }
        var first = true
        func field(_ name: String, _ value: String) {
            out.append(first ? UInt8(ascii: "{") : UInt8(ascii: ","))
            first = false
            JSONString.append(name, to: &out)
            out.append(UInt8(ascii: ":"))
            JSONString.append(value, to: &out)
        }
        func number(_ name: String, _ value: String) {
            out.append(UInt8(ascii: ","))
            JSONString.append(name, to: &out)
            out.append(UInt8(ascii: ":"))
            out.append(contentsOf: value.utf8)
        }
        switch request {
        case .join(let panel): field("cmd", "join"); field("panel", panel)
        case .leave(let panel): field("cmd", "leave"); field("panel", panel)
        case .reset(let panel): field("cmd", "reset"); field("panel", panel)
        case .arm(let panel, let group): field("cmd", "arm"); field("panel", panel); field("group", group)
        case .ranking(let panel, let group): field("cmd", "ranking"); field("panel", panel); field("group", group)
        case .history(let panel, let count): field("cmd", "history"); field("panel", panel); number("n", String(count))
        case .press:
            // Written as a line above.
            field("cmd", "ping")
        case .hello, .help, .panels, .ping, .quit, .kick:
            // Never relayed: they belong to no panel.
            field("cmd", "ping")
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// The term the sender addressed (0 if unreadable).
    static func addressedTerm(_ bytes: [UInt8]) -> Int64 {
        guard let end = bytes.firstIndex(where: { $0 == 0x0A || $0 == 0x20 }), end > 1,
            let (term, digits) = leadingDecimal(bytes[1..<end]), digits == end - 1, term <= UInt64(Int64.max)
        else { return 0 }
        return Int64(term)
    }

    /// The number the digits at the start of `bytes` write, and how many there are; nil
    /// when there are none or the number does not fit.
    private static func leadingDecimal(_ bytes: ArraySlice<UInt8>) -> (value: UInt64, digits: Int)? {
        var value: UInt64 = 0
        var digits = 0
        for b in bytes {
            guard b >= 0x30, b <= 0x39 else { break }
            let (times, o1) = value.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times.addingReportingOverflow(UInt64(b - 0x30))
            guard !o1, !o2 else { return nil }
            value = sum
            digits += 1
        }
        return digits > 0 ? (value, digits) : nil
    }

    /// The relayed command as the leader runs it, or the error its session gets.
    static func parseCommand(_ bytes: [UInt8]) -> Result<ParsedCommand, RequestError> {
        guard let first = bytes.first, first == 0x4A || first == 0x54, let newline = bytes.firstIndex(of: 0x0A) else {
            return .failure(RequestError(.badSyntax, "relayed command without its reply form and term"))
        }
        let format: WireFormat = first == 0x4A ? .json : .text
        var id: CommandID?
        if let space = bytes[..<newline].firstIndex(of: 0x20) {
            guard let parsed = commandID(bytes[(space + 1)..<newline]) else {
                return .failure(RequestError(.badSyntax, "relayed command with an id that cannot be read", format: format))
            }
            id = parsed
        }
        let body = bytes[(newline + 1)...]
        let outcome =
            body.withContiguousStorageIfAvailable { body in
                body.first == UInt8(ascii: "{") ? JSONCommandParser.parse(body) : TextCommandParser.parse(body)
            } ?? .failure(RequestError(.badSyntax, "relayed command not understood"))
        switch outcome {
        case .command(var command):
            command.format = format
            if id != nil { command.id = id }
            return .success(command)
        case .failure(var error):
            error.format = format
            if id != nil { error.id = id }
            return .failure(error)
        case .empty:
            return .failure(RequestError(.badSyntax, "relayed command not understood", format: format, id: id))
        }
    }

    /// `n<number as sent>` or `s<JSON string>`, as `command` writes a session's id.
    private static func commandID(_ bytes: ArraySlice<UInt8>) -> CommandID? {
        guard let kind = bytes.first, bytes.count > 1 else { return nil }
        let rest = bytes.dropFirst()
        switch kind {
        case UInt8(ascii: "n"):
            return .number(String(decoding: rest, as: UTF8.self))
        case UInt8(ascii: "s"):
            let value = rest.withContiguousStorageIfAvailable { try? JSONParser.parse($0, maxDepth: 1) } ?? nil
            guard case .string(let s)? = value else { return nil }
            return .string(s)
        default:
            return nil
        }
    }

    // MARK: Replies

    /// `seq`: a joined reply's snapshot seq, sent as a `#<seq>` line before the grants (a
    /// parser without it skips the line, as it skips any line not of three fields).
    static func reply(_ kind: ReplyKind, grants: [(button: Int, owner: Owner)] = [], seq: UInt64? = nil, rendered: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [kind.rawValue]
        if kind == .joined {
            if let seq { out.append(contentsOf: "#\(seq)\n".utf8) }
            for (button, owner) in grants { out.append(contentsOf: "\(button) \(owner.fence) \(owner.name)\n".utf8) }
            out.append(nul)
        }
        out.append(contentsOf: rendered)
        return out
    }

    struct Reply {
        var kind: ReplyKind
        var grants: [Int: (owner: String, fence: UInt64)]
        /// A joined reply's snapshot seq, when the leader sent it.
        var seq: UInt64? = nil
        var rendered: ArraySlice<UInt8>
    }

    static func parseReply(_ line: [UInt8]) -> Reply? {
        guard let first = line.first, let kind = ReplyKind(rawValue: first) else { return nil }
        var rest = line.dropFirst()
        var grants: [Int: (owner: String, fence: UInt64)] = [:]
        var seq: UInt64?
        if kind == .joined {
            guard let end = rest.firstIndex(of: nul) else { return nil }
            for entry in rest[..<end].split(separator: UInt8(ascii: "\n")) {
                if entry.first == UInt8(ascii: "#") {
                    seq = UInt64(String(decoding: entry.dropFirst(), as: UTF8.self))
                    continue
                }
                let parts = entry.split(separator: UInt8(ascii: " "), maxSplits: 2)
                guard parts.count == 3, let b = Int(String(decoding: parts[0], as: UTF8.self)),
                    let fence = UInt64(String(decoding: parts[1], as: UTF8.self))
                else { continue }
                grants[b] = (String(decoding: parts[2], as: UTF8.self), fence)
            }
            rest = rest[(end + 1)...]
        }
        return Reply(kind: kind, grants: grants, seq: seq, rendered: rest)
    }

    /// The button and place a rendered `QUEUED` answer names, in either form (text:
    /// `QUEUED <p> <b> position=<n> owner=<o>`; JSON: `"button":"<b>"`, `"position":<n>`),
    /// for the follower that must tell the waiter when the line is gone.
    static func queuedPlace(_ rendered: ArraySlice<UInt8>) -> (button: String, position: Int)? {
        guard let (button, position) = buttonAnd("position", of: rendered, verb: "QUEUED", type: "queued") else { return nil }
        return (button, Int(clamping: position))
    }

    /// Whether a rendered answer is a `GRANTED`, in either form.
    static func isGranted(_ rendered: ArraySlice<UInt8>) -> Bool {
        ByteSearch.hasPrefix(textGranted, rendered) || ByteSearch.hasPrefix(jsonGranted, rendered)
    }

    private static let textGranted = Array("GRANTED ".utf8)
    private static let jsonGranted = Array(#"{"type":"granted""#.utf8)

    /// The fence of a rendered `GRANTED`, in either form, nil for any other answer. Read
    /// from the bytes: it is asked of every relayed DOWN's answer.
    static func grantedFence(_ rendered: ArraySlice<UInt8>) -> UInt64? {
        guard isGranted(rendered) else { return nil }
        let key = rendered.first == UInt8(ascii: "{") ? jsonFenceKey : textFenceKey
        guard let at = ByteSearch.start(of: key, in: rendered) else { return nil }
        return leadingDecimal(rendered[(at + key.count)...])?.value
    }

    private static let textFenceKey = Array(" fence=".utf8)
    private static let jsonFenceKey = Array(#""fence":"#.utf8)

    /// The button and fence a rendered `GRANTED` names, in either form.
    static func grantedButtonAndFence(_ rendered: ArraySlice<UInt8>) -> (button: String, fence: UInt64)? {
        guard let (button, fence) = buttonAnd("fence", of: rendered, verb: "GRANTED", type: "granted") else { return nil }
        return (button, fence)
    }

    /// The button and one number field of a rendered answer `verb` (JSON: `type`).
    private static func buttonAnd(_ key: String, of rendered: ArraySlice<UInt8>, verb: String, type: String) -> (String, UInt64)? {
        if rendered.first == UInt8(ascii: "{") {
            let text = String(decoding: rendered, as: UTF8.self)
            guard text.hasPrefix("{\"type\":\"\(type)\""), let b = text.range(of: "\"button\":\""),
                let end = text[b.upperBound...].firstIndex(of: "\""), let number = number(after: "\"\(key)\":", in: text)
            else { return nil }
            return (String(text[b.upperBound..<end]), number)
        }
        let line = rendered.prefix { $0 != UInt8(ascii: "\n") && $0 != UInt8(ascii: "\r") }
        let tokens = line.split(separator: UInt8(ascii: " ")).map { String(decoding: $0, as: UTF8.self) }
        guard tokens.count >= 4, tokens[0] == verb, let number = value(key, tokens).flatMap({ UInt64($0) }) else { return nil }
        return (tokens[2], number)
    }

    /// Whether a rendered answer is an `ERROR unavailable`, in either form.
    static func isUnavailable(_ rendered: ArraySlice<UInt8>) -> Bool {
        rendered.starts(with: "ERROR unavailable".utf8) || rendered.starts(with: #"{"type":"error","code":"unavailable""#.utf8)
    }

    // MARK: Events

    /// What a follower tracks of `event` (`RelayEventLine.Fact`).
    static func fact(of event: PanelEvent) -> RelayEventLine.Fact {
        switch event.kind {
        case .pressed(let button, let owner):
            .granted(button: button, owner: owner.name, session: UInt64(owner.session.number), fence: owner.fence)
        case .released(let button, let reason, let owner):
            .released(button: button, fence: owner.fence, reason: reason)
        case .left(_, let session):
            .left(session: UInt64(session.number))
        case .fired, .progress, .midway, .tapped, .started, .stopped, .cancelled, .joined, .presence, .queued, .dequeued, .armed, .buzzed, .closed:
            .plain
        }
    }

    static func event(text: [UInt8], json: [UInt8]) -> [UInt8] {
        var out = text
        out.append(nul)
        out.append(contentsOf: json)
        return out
    }

    /// A failover notice's lines (text or JSON) with its `RELEASED ... reason=failover`
    /// lines kept only for the fences in `known`; every other line as it is.
    static func keepingFailoverReleases(of known: Set<UInt64>, in lines: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var out: [UInt8] = []
        out.reserveCapacity(lines.count)
        var removed = false
        for line in lines.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true) {
            if line.starts(with: "RELEASED ".utf8) || line.starts(with: #"{"type":"released""#.utf8),
                let fence = number(after: line.first == UInt8(ascii: "{") ? #""fence":"# : " fence=", in: line), !known.contains(fence)
            {
                removed = true
                continue
            }
            out.append(contentsOf: line)
            out.append(UInt8(ascii: "\n"))
        }
        // Every line the encoder writes ends with a newline, as each kept one still does.
        return removed ? out[...] : lines
    }

    /// The digits after `key` in `line`, as a number.
    private static func number(after key: String, in line: ArraySlice<UInt8>) -> UInt64? {
        number(after: key, in: String(decoding: line, as: UTF8.self))
    }

    private static func number(after key: String, in text: String) -> UInt64? {
        guard let range = text.range(of: key) else { return nil }
        return UInt64(text[range.upperBound...].prefix { $0.isNumber })
    }

    static func splitEvent(_ line: [UInt8]) -> (text: ArraySlice<UInt8>, json: ArraySlice<UInt8>)? {
        guard let cut = line.firstIndex(of: nul) else { return nil }
        return (line[..<cut], line[(cut + 1)...])
    }

    /// What an event's text form says about ownership, for a follower that may have to end
    /// it at a failover: a grant began (`PRESSED`) or ended (`RELEASED`).
    enum Ownership: Equatable {
        case granted(button: String, owner: String, fence: UInt64)
        case released(button: String, fence: UInt64?, reason: ReleaseReason?)
    }

    static func ownership(ofTextEvent line: ArraySlice<UInt8>) -> Ownership? {
        let tokens = line.split(separator: UInt8(ascii: " ")).map { String(decoding: $0, as: UTF8.self) }
        guard tokens.count >= 3 else { return nil }
        switch tokens[0] {
        case "PRESSED":
            guard let owner = value("owner", tokens), let fence = value("fence", tokens).flatMap({ UInt64($0) }) else { return nil }
            return .granted(button: tokens[2], owner: owner, fence: fence)
        case "RELEASED":
            return .released(
                button: tokens[2], fence: value("fence", tokens).flatMap { UInt64($0) }, reason: value("reason", tokens).flatMap(ReleaseReason.init))
        default:
            return nil
        }
    }

    /// The session a `LEFT` event names, nil for any other event. Only `LEFT` lines are
    /// split: this is asked of every event a follower passes on.
    static func leftSession(ofTextEvent line: ArraySlice<UInt8>) -> SessionID? {
        guard line.starts(with: "LEFT ".utf8) else { return nil }
        let tokens = line.split(separator: UInt8(ascii: " ")).map { String(decoding: $0, as: UTF8.self) }
        return value("session", tokens).flatMap { SessionID(parsing: $0) }
    }

    private static func value(_ key: String, _ tokens: [String]) -> String? {
        for token in tokens where token.hasPrefix(key + "=") {
            var v = String(token.dropFirst(key.count + 1))
            if v.hasSuffix("\n") { v.removeLast() }
            return v
        }
        return nil
    }
}
