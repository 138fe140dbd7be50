import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP relay on 127.0.0.1 between the client and a server that can go silent without
/// closing anything: what a pulled cable or a sleeping Wi-Fi looks like to both ends.
/// Only the connections open at `freeze()` go silent; later ones pass.
final class FreezingProxy: @unchecked Sendable {
    struct Failure: Error {
        let description: String
    }

    let port: UInt16
    private let listener: Int32
    private let upstream: UInt16
    private let lock = NSLock()
    private var connections: [(client: Int32, server: Int32)] = []
    private var frozen: Set<Int32> = []
    /// Connections made so far.
    private(set) var accepted = 0

    init(to upstream: UInt16) throws {
        self.upstream = upstream
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        listener = fd
        var address = Self.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 16) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard ok else { throw Failure(description: "proxy listen: errno \(errno)") }
        port = UInt16(bigEndian: address.sin_port)
        Thread { [self] in acceptLoop() }.start()
    }

    deinit {
        shutdown(listener, Int32(SHUT_RDWR))
        Glibc.close(listener)
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: upstream)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else {
                Glibc.close(client)
                Glibc.close(server)
                continue
            }
            lock.lock()
            connections.append((client, server))
            accepted += 1
            lock.unlock()
            Thread { [self] in pump(from: client, to: server, key: client) }.start()
            Thread { [self] in pump(from: server, to: client, key: client) }.start()
        }
    }

    /// Copies bytes one way; while frozen they are read and dropped, as a dead path would.
    private func pump(from source: Int32, to sink: Int32, key: Int32) {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(source, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { break }
            lock.lock()
            let silent = frozen.contains(key)
            lock.unlock()
            if silent { continue }
            var sent = 0
            while sent < n {
                let m = buffer[sent..<n].withUnsafeBytes { send(sink, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                guard m > 0 else { break }
                sent += m
            }
        }
        shutdown(sink, Int32(SHUT_RDWR))
    }

    /// Every connection open now carries nothing more, either way, and stays open.
    func freeze() {
        lock.lock()
        for connection in connections { frozen.insert(connection.client) }
        lock.unlock()
    }
}
