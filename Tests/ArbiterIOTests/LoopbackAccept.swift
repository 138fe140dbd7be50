import ArbiterIO
import Glibc

/// A client connected to `listener` over loopback and the server side's accepted
/// descriptor: what a test's loop registers as a channel. Nil when nothing was accepted
/// within 10 s.
func loopbackConnection(to listener: (fd: Int32, port: UInt16)) throws -> (client: Int32, accepted: Int32)? {
    let client = try Sys.connect(host: "127.0.0.1", port: listener.port).get()
    // Bounded: an accept that keeps failing ends the loop.
    for _ in 0..<1000 {
        var p = pollfd(fd: listener.fd, events: Int16(POLLIN), revents: 0)
        guard poll(&p, 1, 10_000) == 1 else { break }
        if case .accepted(let fd, _) = Sys.accept(listener.fd) { return (client, fd) }
    }
    Sys.close(client)
    return nil
}
