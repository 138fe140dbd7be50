import ArbiterCore
import ArbiterWire
import Foundation

/// Reads a `--config` file into panels, with errors naming the file, the path inside
/// it and what is wrong.
public enum ConfigLoader {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public static func load(path: String) throws(Failure) -> [PanelConfig] {
        guard let data = FileManager.default.contents(atPath: path) else {
            let reason = FileManager.default.fileExists(atPath: path) ? "cannot be read" : "does not exist"
            throw Failure(description: "\(path): \(reason)")
        }
        let panels: [PanelConfig]
        do {
            panels = try ConfigDecoder.decode(Array(data))
        } catch {
            throw Failure(description: "\(path): \(error.description)")
        }
        return try HookSecretFile.fill(panels, configPath: path)
    }
}
