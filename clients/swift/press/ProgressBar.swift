import Foundation

/// A hold's progress on one terminal line, redrawn in place; as a line per tenth when the
/// output is not a terminal.
final class ProgressBar: Sendable {
    private let terminal = isatty(STDOUT_FILENO) == 1
    private let lastTenth = LockedTenth()

    func show(_ value: Double) {
        let filled = Int((value * 30).rounded(.down))
        let text = "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: 30 - filled) + "] " + String(format: "%3.0f%%", value * 100)
        if terminal {
            write("\r" + text)
        } else if lastTenth.advance(to: Int(value * 10)) {
            write(text + "\n")
        }
    }

    /// A line of its own, below the bar.
    func note(_ text: String) {
        write((terminal ? "\r\u{1B}[K" : "") + text + "\n")
    }

    private func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}
