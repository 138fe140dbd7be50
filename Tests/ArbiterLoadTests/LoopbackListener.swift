import Foundation
import Glibc
import Synchronization

/// What the fake servers share: a listening socket on 127.0.0.1 at a port the kernel
/// chose, its connections numbered and served each on a thread, and read line by line.
final class LoopbackListener: Sendable {
    let fd: Int32
    let port: UInt16
    /// The connections accepted, for `stop`.
    private let clients = Mutex<[Int32]>([])

    struct SetupError: Error {}

    init() throws(SetupError) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SetupError() }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = 0
        inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr)
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } }
        guard bound == 0, listen(fd, 64) == 0 else {
            close(fd)
            throw SetupError()
        }
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        self.fd = fd
        self.port = UInt16(bigEndian: addr.sin_port)
    }

    /// Accepts on a thread of its own until `stop`, and serves each connection on a
    /// thread of its own, with its number (1, 2, ... in accept order: the fakes' sessions).
    func serveEach(_ body: @escaping @Sendable (_ client: Int32, _ number: Int) -> Void) {
        Thread { [self] in
            // Bounded by stop(), which shuts the listener down.
            for number in 1... {
                let client = accept(fd, nil, nil)
                guard client >= 0 else { return }
                clients.withLock { $0.append(client) }
                Thread { body(client, number) }.start()
            }
        }.start()
    }

    /// No more connections, and every one accepted is shut down.
    func stop() {
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
        for c in clients.withLock({ $0 }) { shutdown(c, Int32(SHUT_RDWR)) }
    }

    /// Hands each line `fd` reads (without its newline) to `body`, until the peer closes.
    static func readLines(_ fd: Int32, _ body: (String) -> Void) {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        // Bounded by the peer: it ends when the connection closes.
        while true {
            let got = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard got > 0 else { return }
            buffer += chunk[..<got]
            while let newline = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeFirst(newline + 1)
                body(line)
            }
        }
    }
}
