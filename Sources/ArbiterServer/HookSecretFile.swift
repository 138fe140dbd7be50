import ArbiterCore
import ArbiterWire
import Foundation

/// Reads each hook's `secret_file` once, at start. The key signs what receivers act on,
/// so a file others on the machine may read is refused, as `--cluster-key` is.
enum HookSecretFile {
    /// `panels` with every hook's `secret` filled in; a relative file name is taken from
    /// the config file's directory. The error names the config path of the hook.
    static func fill(_ panels: [PanelConfig], configPath: String) throws(ConfigLoader.Failure) -> [PanelConfig] {
        let base = (configPath as NSString).deletingLastPathComponent
        var result = panels
        for p in result.indices {
            for h in result[p].hooks.indices {
                guard let name = result[p].hooks[h].secretFile else { continue }
                let file = name.hasPrefix("/") || base.isEmpty ? name : base + "/" + name
                switch read(file) {
                case .success(let key): result[p].hooks[h].secret = key
                case .failure(let why):
                    throw ConfigLoader.Failure(description: "\(configPath): panels[\(p)].hooks[\(h)].secret_file: \(file) \(why.reason)")
                }
            }
        }
        return result
    }

    static func read(_ file: String) -> Result<[UInt8], HookSecretFailure> {
        var info = stat()
        guard stat(file, &info) == 0 else { return .failure(HookSecretFailure(reason: "cannot be read: \(String(cString: strerror(errno)))")) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { return .failure(HookSecretFailure(reason: "is not a regular file")) }
        guard info.st_mode & 0o044 == 0 else {
            return .failure(HookSecretFailure(reason: "is readable by group or others (mode \(String(info.st_mode & 0o777, radix: 8))); chmod 600 it"))
        }
        guard info.st_size <= 4096, let data = FileManager.default.contents(atPath: file) else {
            return .failure(HookSecretFailure(reason: "cannot be read, or is longer than 4096 bytes"))
        }
        return HookSecret.parse(Array(data))
    }
}
