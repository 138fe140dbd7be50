import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A stand-in server on 127.0.0.1 that answers the client's JSON commands from a script,
/// for what a real server never does on purpose: an event chain with a hole in it.
/// `respond` gets each command's `cmd`, its `id` and how many JOINs came before, and
/// returns the lines to send.
final class ScriptedServer: @unchecked Sendable {
    struct Failure: Error {
        let description: String
    }

    let port: UInt16
    private let listener: Int32
    private let respond: @Sendable (_ cmd: String, _ id: String, _ joins: Int) -> [String]

    init(respond: @escaping @Sendable (_ cmd: String, _ id: String, _ joins: Int) -> [String]) throws {
        self.respond = respond
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        listener = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 4) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard ok else { throw Failure(description: "listen: errno \(errno)") }
        port = UInt16(bigEndian: address.sin_port)
        Thread { [self] in serve() }.start()
    }

    deinit {
        shutdown(listener, Int32(SHUT_RDWR))
        Glibc.close(listener)
    }

    private func serve() {
        while true {
            let peer = accept(listener, nil, nil)
            guard peer >= 0 else { return }
            Thread { [self] in converse(peer) }.start()
        }
    }

    private func converse(_ peer: Int32) {
        defer { Glibc.close(peer) }
        write(peer, ["WELCOME session=s1 name=guest-1 proto=1"])
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        var joins = 0
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(peer, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { return }
            buffer += chunk[..<n]
            while let newline = buffer.firstIndex(of: 0x0A) {
                let line = Data(buffer[..<newline])
                buffer.removeSubrange(...newline)
                guard let object = try? JSONSerialization.jsonObject(with: line) as? [String: Any], let cmd = object["cmd"] as? String,
                    let id = object["id"] as? String
                else { continue }
                write(peer, respond(cmd, id, joins))
                if cmd == "join" { joins += 1 }
            }
        }
    }

    private func write(_ peer: Int32, _ lines: [String]) {
        let bytes = Array(lines.map { $0 + "\n" }.joined().utf8)
        _ = bytes.withUnsafeBytes { send(peer, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }
}
