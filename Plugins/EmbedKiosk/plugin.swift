import Foundation
import PackagePlugin

/// Embeds the kiosk page (clients/kiosk) into the server binary at build time, so
/// `swift run -c release arbiter` serves it with no extra files and the page has
/// exactly one source.
@main
struct EmbedKiosk: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let tool = try context.tool(named: "kiosk-embed")
        let directory = context.package.directoryURL.appending(path: "clients").appending(path: "kiosk")
        let files = try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { !$0.lastPathComponent.hasPrefix(".") && !$0.hasDirectoryPath }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        let output = context.pluginWorkDirectoryURL.appending(path: "KioskAssets.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(files.count) kiosk files",
                executable: tool.url,
                arguments: [output.path] + files.map(\.path),
                inputFiles: files,
                outputFiles: [output]
            )
        ]
    }
}
