import ArbiterCore

/// A panel's ids as ready-made bytes, for the text replies and events of the press
/// path: they are written on every command, and copying prepared bytes is much cheaper
/// than going through `String` each time.
///
/// A class, holding the config too, so that handing it to the encoder is one reference
/// and not a copy of every string of the configuration.
public final class PanelNames: Sendable {
    public let config: PanelConfig
    public let panel: [UInt8]
    public let buttons: [[UInt8]]

    public init(_ config: PanelConfig) {
        self.config = config
        panel = Array(config.id.utf8)
        buttons = config.buttons.map { Array($0.id.utf8) }
    }
}

extension MessageEncoder {
    /// `encode(_:panel:format:id:into:)` with the common text replies written directly.
    public static func encode(_ reply: PanelReply, names: PanelNames, format: WireFormat, id: CommandID?, into out: inout [UInt8]) {
        guard format == .text else { return encode(reply, panel: names.config, format: format, id: id, into: &out) }
        switch reply {
        case .granted(let b, let fence):
            Bytes.append("GRANTED ", to: &out)
            head(names, b, &out)
            Bytes.append(" fence=", to: &out)
            Bytes.appendDecimal(fence, to: &out)
            out.append(0x0A)
        case .released(let verb, let b, nil):
            Bytes.append(verb == .up ? "OK UP " : "OK CANCEL ", to: &out)
            head(names, b, &out)
            out.append(0x0A)
        case .deniedBusy(let b, let owner, let ownerSession, let active):
            // Contended buttons answer this most: no String is made for it. Names are
            // `[A-Za-z0-9_.-]`, never quoted.
            Bytes.append("DENIED ", to: &out)
            head(names, b, &out)
            Bytes.append(" reason=busy owner=", to: &out)
            out.append(contentsOf: owner.utf8)
            Bytes.append(" active=", to: &out)
            out.append(contentsOf: names.buttons[active])
            Bytes.append(" owner_session=s", to: &out)
            Bytes.appendDecimal(Int64(ownerSession.number), to: &out)
            out.append(0x0A)
        case .queued(let b, let position, let owner) where id == nil:
            // Every DOWN on a busy queue group: as common there as GRANTED.
            Bytes.append("QUEUED ", to: &out)
            head(names, b, &out)
            Bytes.append(" position=", to: &out)
            Bytes.appendDecimal(Int64(position), to: &out)
            Bytes.append(" owner=", to: &out)
            out.append(contentsOf: owner.utf8)
            out.append(0x0A)
        default:
            encode(reply, panel: names.config, format: format, id: id, into: &out)
        }
    }

    /// `encode(_:panel:format:into:)` with the common text events written directly.
    public static func encode(_ event: PanelEvent, names: PanelNames, format: WireFormat, into out: inout [UInt8]) {
        guard format == .text else { return encode(event, panel: names.config, format: format, into: &out) }
        switch event.kind {
        case .pressed(let b, let o), .fired(let b, let o):
            if case .pressed = event.kind { Bytes.append("PRESSED ", to: &out) } else { Bytes.append("FIRED ", to: &out) }
            head(names, b, &out)
            Bytes.append(" owner=", to: &out)
            out.append(contentsOf: o.name.utf8)
            Bytes.append(" session=s", to: &out)
            Bytes.appendDecimal(Int64(o.session.number), to: &out)
            Bytes.append(" fence=", to: &out)
            Bytes.appendDecimal(o.fence, to: &out)
        case .released(let b, let reason, let o):
            Bytes.append("RELEASED ", to: &out)
            head(names, b, &out)
            Bytes.append(" reason=", to: &out)
            out.append(contentsOf: reason.rawValue.utf8)
            Bytes.append(" owner=", to: &out)
            out.append(contentsOf: o.name.utf8)
            Bytes.append(" fence=", to: &out)
            Bytes.appendDecimal(o.fence, to: &out)
        case .queued(let b, let name, let session, let position):
            Bytes.append("QUEUED ", to: &out)
            head(names, b, &out)
            Bytes.append(" name=", to: &out)
            out.append(contentsOf: name.utf8)
            Bytes.append(" session=s", to: &out)
            Bytes.appendDecimal(Int64(session.number), to: &out)
            Bytes.append(" position=", to: &out)
            Bytes.appendDecimal(Int64(position), to: &out)
        default:
            return encode(event, panel: names.config, format: format, into: &out)
        }
        Bytes.append(" seq=", to: &out)
        Bytes.appendDecimal(event.seq, to: &out)
        out.append(0x0A)
    }

    @inline(__always)
    private static func head(_ names: PanelNames, _ b: Int, _ out: inout [UInt8]) {
        out.append(contentsOf: names.panel)
        out.append(0x20)
        out.append(contentsOf: names.buttons[b])
    }
}
