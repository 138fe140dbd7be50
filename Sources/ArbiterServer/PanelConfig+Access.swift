import ArbiterCore

extension PanelConfig {
    /// What `key` opens on this panel, on a server where `serverHasKeys` (any panel has a
    /// key); on one without keys at all, everyone is admin everywhere.
    func access(forKey key: String?, serverHasKeys: Bool) -> Access {
        serverHasKeys ? keys.access(forKey: key) : .admin
    }
}
