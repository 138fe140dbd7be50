import Foundation
#if canImport(Glibc)
    import Glibc
#endif

/// A loopback TCP socket for HTTP and WebSocket tests: raw bytes, bounded waits.
public final class RawSocket: @unchecked Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public let fd: Int32
    private var buffer: [UInt8] = []

    /// `source`: another loopback address (127.x.y.z) to connect from, as for `LineClient`.
    public init(port: UInt16, source: String? = nil) throws {
        do {
            fd = try LoopbackSocket.connect(port: port, source: source)
        } catch {
            throw Failure(description: "\(error)")
        }
    }

    deinit { Glibc.close(fd) }

    public func send(_ bytes: [UInt8]) {
        LoopbackSocket.send(fd, bytes)
    }

    public func send(_ text: String) { send(Array(text.utf8)) }

    /// Bytes available within `timeout`; empty at end of stream.
    public func read(timeout: Double) throws -> [UInt8] {
        if !buffer.isEmpty { return takeBuffered() }
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&pfd, 1, Int32(max(1, timeout * 1000))) > 0 else { throw Failure(description: "nothing within \(timeout)s") }
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n < 0 { throw Failure(description: "recv errno \(errno)") }
        return Array(chunk[..<n])
    }

    public func takeBuffered() -> [UInt8] {
        defer { buffer = [] }
        return buffer
    }

    /// Reads an HTTP response head (through the blank line); what follows stays buffered.
    public func readHead(timeout: Double = 5) throws -> String {
        let deadline = Deadline(after: timeout)
        var data: [UInt8] = []
        while true {
            if let end = Self.find([13, 10, 13, 10], in: data) {
                buffer = Array(data[(end + 4)...])
                return String(decoding: data[..<end], as: UTF8.self)
            }
            let remaining = deadline.remaining
            guard remaining > 0 else { throw Failure(description: "no response head") }
            let bytes = try read(timeout: remaining)
            guard !bytes.isEmpty else { throw Failure(description: "closed before a head: \(String(decoding: data, as: UTF8.self))") }
            data += bytes
        }
    }

    /// One whole HTTP response: head and a Content-Length body.
    public func readResponse(timeout: Double = 5) throws -> (head: String, body: String) {
        let head = try readHead(timeout: timeout)
        let length =
            head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
            .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
        var body = takeBuffered()
        let deadline = Deadline(after: timeout)
        while body.count < length, !deadline.hasPassed {
            let more = try read(timeout: deadline.remaining)
            if more.isEmpty { break }
            body += more
        }
        buffer = Array(body.dropFirst(length))
        return (head, String(decoding: body.prefix(length), as: UTF8.self))
    }

    /// Whether the peer closes within `timeout` (bytes that arrive meanwhile are kept).
    public func waitForClose(timeout: Double = 5) -> Bool {
        let deadline = Deadline(after: timeout)
        while !deadline.hasPassed {
            guard let bytes = try? read(timeout: deadline.remaining) else { return false }
            if bytes.isEmpty { return true }
        }
        return false
    }

    static func find(_ needle: [UInt8], in hay: [UInt8]) -> Int? {
        guard hay.count >= needle.count else { return nil }
        for i in 0...(hay.count - needle.count) where hay[i] == needle[0] && Array(hay[i..<(i + needle.count)]) == needle {
            return i
        }
        return nil
    }
}
