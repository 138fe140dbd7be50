import ArbiterCLI
import Foundation

/// Reads `--cluster-key` once, at start. The key proves a node to the others, so a file
/// anyone else on the machine may read is refused, as ssh refuses such a private key.
enum ClusterKeyFile {
    /// The key's bytes (without the trailing newline an editor or `echo` leaves), or why
    /// the file cannot be used.
    static func read(path: String) -> Result<[UInt8], UsageError> {
        var info = stat()
        guard stat(path, &info) == 0 else {
            return .failure(UsageError(message: "--cluster-key \(path) cannot be read: \(String(cString: strerror(errno)))"))
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else { return .failure(UsageError(message: "--cluster-key \(path) is not a regular file")) }
        guard info.st_mode & 0o044 == 0 else {
            return .failure(
                UsageError(message: "--cluster-key \(path) is readable by group or others (mode \(String(info.st_mode & 0o777, radix: 8))); chmod 600 \(path)"))
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            return .failure(UsageError(message: "--cluster-key \(path) cannot be read"))
        }
        var bytes = [UInt8](data)
        while let last = bytes.last, last == 0x0A || last == 0x0D { bytes.removeLast() }
        guard !bytes.isEmpty else {
            return .failure(UsageError(message: "--cluster-key \(path) is empty; put a long random secret in it, e.g. head -c 32 /dev/urandom | base64"))
        }
        guard bytes.count >= minimumBytes else {
            return .failure(
                UsageError(
                    message:
                        "--cluster-key \(path) holds only \(bytes.count) bytes; use at least \(minimumBytes) random ones, e.g. head -c 32 /dev/urandom | base64 > \(path) (whoever can read etcd can test guesses of a short key offline against the check value stored there)"
                ))
        }
        return .success(bytes)
    }

    /// 128 bits. etcd holds `HMAC(key, "arbiter-cluster-key-check")` and a sniffed relay
    /// handshake holds MACs under the key, so a short or guessable key can be found offline
    /// by anyone who reads either; with it they could pose as a node. The README's
    /// `head -c 32 /dev/urandom | base64` gives 44 bytes.
    static let minimumBytes = 16
}
