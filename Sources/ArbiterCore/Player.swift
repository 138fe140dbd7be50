/// Who pressed, as far as the server can tell across connections: a session's name and
/// the address its client connected from.
///
/// An early press locks out the player, not only its session: a second connection under
/// the same name from the same address is the same person trying again. Keys cannot
/// tell players apart (one secret per level, shared by everyone who presses), and a
/// name alone would let anyone lock out someone else by taking their name.
public struct Player: Hashable, Sendable {
    public var name: String
    /// The client's address without its port; in cluster mode, for a session of another
    /// node, that node's name (`PanelHost.run`).
    public var address: String

    public init(name: String, address: String) {
        self.name = name
        self.address = address
    }
}
