import ArbiterIO

/// One arbiter node to connect to: `--hosts a:7070,b:7070,c:7070` lists several (cluster
/// mode, issue 11), and connections are spread over them.
public struct LoadHost: Sendable, Equatable {
    public var host: String
    public var port: UInt16

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    public var authority: String { HostLiteral.authority(host, port: port) }

    /// `HOST:PORT[,HOST:PORT...]`, IPv6 in brackets; nil with what is wrong.
    static func parseList(_ text: String) -> Result<[LoadHost], LoadOptions.UsageError> {
        var hosts: [LoadHost] = []
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard let colon = item.lastIndex(of: ":"), let port = UInt16(item[item.index(after: colon)...]), port > 0,
                let host = HostLiteral(String(item[..<colon]))
            else {
                return .failure(LoadOptions.UsageError(message: "--hosts must be HOST:PORT,HOST:PORT... such as 127.0.0.1:7070,[::1]:7071, not '\(item)'"))
            }
            hosts.append(LoadHost(host: host.address, port: port))
        }
        return .success(hosts)
    }
}
