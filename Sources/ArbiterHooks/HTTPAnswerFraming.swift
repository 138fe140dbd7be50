/// Where a receiver's answer ends, and whether its connection can carry the next request
/// (RFC 9112 §6.3, §9.3). Only the plainest answers keep a connection: HTTP/1.1, no
/// `Connection: close`, and a body framed by `Content-Length` (or none by its status)
/// that fits in what the sender reads. Anything else (chunked, a body ended by closing,
/// an interim 1xx) is read as far as its status and the connection closed.
enum HTTPAnswerFraming: Equatable {
    case reusable
    case close

    /// nil while the head, or a body the connection could be kept past, is still coming.
    static func complete(_ bytes: [UInt8], limit: Int = PlainHTTPSender.maxResponseBytes) -> HTTPAnswerFraming? {
        guard let headEnd = headEnd(bytes) else { return nil }
        guard let length = bodyLength(head: bytes[..<headEnd]) else { return .close }
        let total = headEnd + 4 + length
        guard total <= limit else { return .close }
        guard bytes.count >= total else { return nil }
        // Bytes past the answer were never asked for: the connection is out of step.
        return bytes.count == total ? .reusable : .close
    }

    static func headEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for i in 0...(bytes.count - 4)
        where bytes[i] == 13 && bytes[i + 1] == 10 && bytes[i + 2] == 13 && bytes[i + 3] == 10 {
            return i
        }
        return nil
    }

    /// The body's length on a connection that stays open, or nil if it cannot stay open.
    static func bodyLength(head: ArraySlice<UInt8>) -> Int? {
        let lines = String(decoding: head, as: UTF8.self).split(separator: "\r\n", omittingEmptySubsequences: false)
        guard let status = lines.first, status.hasPrefix("HTTP/1.1 ") else { return nil }
        let code = Int(status.dropFirst(9).prefix(3)) ?? 0
        guard code >= 200 else { return nil }
        var length: Int?
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { return nil }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: " \t")
            switch name {
            case "connection":
                if value.lowercased().split(separator: ",").contains(where: { $0.trimmingCharacters(in: " \t") == "close" }) { return nil }
            case "transfer-encoding":
                return nil
            case "content-length":
                guard let n = Int(value), n >= 0, value.allSatisfy(\.isASCIIDigit), length == nil || length == n else { return nil }
                length = n
            default:
                continue
            }
        }
        if code == 204 || code == 304 { return 0 }
        return length
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: String) -> Substring {
        var s = self
        while let c = s.first, set.contains(c) { s.removeFirst() }
        while let c = s.last, set.contains(c) { s.removeLast() }
        return s
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
