import Foundation
#if canImport(Glibc)
    import Glibc
#endif

/// A blocking loopback TCP client that speaks lines, for tests. Every wait is
/// bounded by a timeout, so a broken server fails a test instead of hanging it.
public final class LineClient: @unchecked Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public let fd: Int32
    private var buffer: [UInt8] = []
    /// Every line received, in order.
    public private(set) var received: [String] = []

    /// - Parameter receiveBuffer: a small kernel receive buffer makes a peer that stops
    ///   reading push back on the server sooner (slow-consumer tests).
    /// - Parameter source: another loopback address (127.x.y.z) to connect from, so the
    ///   server sees a second client address; the traffic stays on loopback.
    public init(host: String = "127.0.0.1", port: UInt16, receiveBuffer: Int32? = nil, source: String? = nil) throws {
        do {
            fd = try LoopbackSocket.connect(host: host, port: port, receiveBuffer: receiveBuffer, source: source)
        } catch {
            throw Failure(description: "\(error)")
        }
    }

    deinit { Glibc.close(fd) }

    public func send(_ line: String) {
        sendRaw(Array((line + "\n").utf8))
    }

    public func sendRaw(_ bytes: [UInt8]) {
        LoopbackSocket.send(fd, bytes)
    }

    /// The next line, waiting at most `timeout` seconds.
    public func readLine(timeout: Double = 5) throws -> String {
        let deadline = Deadline(after: timeout)
        while true {
            if let nl = buffer.firstIndex(of: 0x0A) {
                var line = Array(buffer[..<nl])
                buffer.removeSubrange(...nl)
                if line.last == 0x0D { line.removeLast() }
                let text = String(decoding: line, as: UTF8.self)
                received.append(text)
                return text
            }
            let remaining = deadline.remaining
            guard remaining > 0 else {
                throw Failure(description: "no line within \(timeout)s; have \(received.suffix(5)); \(LineClient.tcpState(fd))")
            }
            guard try fill(timeout: remaining) else { throw Failure(description: "connection closed; last lines \(received.suffix(5))") }
        }
    }

    /// Lines up to and including the first one with `prefix`.
    public func readLines(through prefix: String, timeout: Double = 5) throws -> [String] {
        var lines: [String] = []
        for _ in 0..<100_000 {
            let line = try readLine(timeout: timeout)
            lines.append(line)
            if line.hasPrefix(prefix) { return lines }
        }
        throw Failure(description: "no \(prefix) line")
    }

    /// Skips lines until one starts with `prefix`, and returns it.
    @discardableResult
    public func expect(_ prefix: String, timeout: Double = 5) throws -> String {
        try readLines(through: prefix, timeout: timeout).last!
    }

    /// Whatever arrives within `seconds` (for checking that nothing does).
    public func drain(for seconds: Double) -> [String] {
        var lines: [String] = []
        let deadline = Deadline(after: seconds)
        for _ in 0..<100_000 {
            let remaining = deadline.remaining
            if remaining <= 0 { break }
            guard let line = try? readLine(timeout: remaining) else { break }
            lines.append(line)
        }
        return lines
    }

    /// Reads whatever has arrived, without waiting; the lines go to `received`.
    public func readAvailable() {
        for _ in 0..<10_000 {
            guard (try? fill(timeout: 0.001)) == true else { return }
            var progressed = false
            while let line = try? readLine(timeout: 0.000_001) {
                _ = line
                progressed = true
            }
            if !progressed { return }
        }
    }

    /// Whether the server closes the connection within `timeout`.
    public func waitForClose(timeout: Double = 5) -> Bool {
        let deadline = Deadline(after: timeout)
        for _ in 0..<100_000 {
            let remaining = deadline.remaining
            if remaining <= 0 { return false }
            do {
                if try !fill(timeout: remaining) { return true }
            } catch {
                return true
            }
        }
        return false
    }

    public func close() {
        shutdown(fd, Int32(SHUT_RDWR))
    }

    /// The client side's TCP view, for a timeout's message: whether the server's kernel
    /// took the bytes (unacked 0) tells a server that never read them from one that never
    /// accepted the connection.
    static func tcpState(_ fd: Int32) -> String {
        var info = tcp_info()
        var length = socklen_t(MemoryLayout<tcp_info>.size)
        guard getsockopt(fd, Int32(IPPROTO_TCP), TCP_INFO, &info, &length) == 0 else { return "no TCP_INFO (errno \(errno))" }
        var unread: Int32 = 0
        _ = ioctl(fd, UInt(FIONREAD), &unread)
        return "tcp state=\(info.tcpi_state) unacked=\(info.tcpi_unacked) retransmits=\(info.tcpi_total_retrans) rtt_us=\(info.tcpi_rtt) unread=\(unread)"
    }

    /// Reads what is available; false on end of stream.
    private func fill(timeout: Double) throws -> Bool {
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&pfd, 1, timeout <= 0.001 ? 0 : Int32(timeout * 1000))
        if ready == 0 { return true }
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n > 0 {
            buffer.append(contentsOf: chunk[..<n])
            return true
        }
        if n == 0 { return false }
        throw Failure(description: "recv failed: errno \(errno)")
    }
}
