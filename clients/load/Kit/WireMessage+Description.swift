extension WireMessage {
    /// The message written back in the text form, for violation reports.
    public func describe(_ buttons: ButtonTable?) -> String {
        var parts = [kind.verb]
        if let table = buttons {
            if kind != .welcome && kind != .okHello { parts.append(table.panel) }
            if button >= 0, Int(button) < table.count { parts.append(table.ids[Int(button)]) }
        } else if button >= 0 {
            parts.append("button#\(button)")
        }
        if reason != .none { parts.append((kind == .okUp || kind == .okCancel ? "ended=" : "reason=") + reason.word) }
        if owner >= 0 { parts.append((kind == .joined || kind == .left ? "name=" : "owner=") + ByteText.describeName(owner)) }
        if session >= 0 { parts.append("session=s\(session)") }
        if fence >= 0 { parts.append("fence=\(fence)") }
        if permille >= 0 { parts.append("value=\(permille / 1000).\(WireMessage.threeDigits(permille % 1000))") }
        if heldMs >= 0 { parts.append("held_ms=\(heldMs) discarded=\(discarded)") }
        if members >= 0 { parts.append("members=\(members)") }
        if position >= 0 { parts.append("position=\(position)") }
        if rank >= 0 { parts.append("rank=\(rank)") }
        if afterUs >= 0 { parts.append("after_us=\(afterUs)") }
        if seq >= 0 { parts.append("seq=\(seq)") }
        return parts.joined(separator: " ")
    }

    /// Thousandths with leading zeros, as the server writes them.
    static func threeDigits(_ value: Int32) -> String {
        let s = String(value)
        return String(repeating: "0", count: max(0, 3 - s.count)) + s
    }
}
