import ArbiterCore

/// A panel's ids as ready-made bytes, for the text replies and events of the press
/// path: they are written on every command, and copying prepared bytes is much cheaper
/// than going through `String` each time.
///
/// A class, holding the config too, so that handing it to the encoder is one reference
/// and not a copy of every string of the configuration.
public final class PanelNames: Sendable {
    public let config: PanelConfig
    public let panel: [UInt8]
    public let buttons: [[UInt8]]

    public init(_ config: PanelConfig) {
        self.config = config
        panel = Array(config.id.utf8)
        buttons = config.buttons.map { Array($0.id.utf8) }
    }
}
