import CSystem

extension Sys {
    /// Starts a non-blocking connect to an address literal (`[v6]` and `localhost`
    /// allowed); the fd becomes writable when it is done.
    public static func connect(host: String, port: UInt16) -> Result<Int32, Failure> {
        let fd = cs_connect(HostLiteral(host)?.address ?? host, port)
        return fd >= 0 ? .success(fd) : .failure(Failure(call: "connect \(HostLiteral.authority(host, port: port))", errno: -fd))
    }

    /// The outcome of a non-blocking connect: 0 once connected, else its errno.
    public static func pendingError(_ fd: Int32) -> Int32 {
        cs_socket_error(fd)
    }
}
