/// The socket transport is what the cluster's panels send their frames through.
extension RelayNetwork: RelaySender {}
