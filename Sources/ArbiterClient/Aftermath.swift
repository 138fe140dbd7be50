/// What the core does once its lock is released: socket writes block, and ending a
/// stream calls its termination handler, which takes the lock.
struct Aftermath {
    var links: [Link] = []
    var finishing: [AsyncStream<PanelEvent>.Continuation] = []
    var hangUps: [(link: Link, reason: String)] = []

    mutating func flush(_ link: Link?) {
        if let link, !links.contains(where: { $0 === link }) { links.append(link) }
    }

    func run() {
        for (link, reason) in hangUps { link.hangUp(reason) }
        for link in links { link.flush() }
        for stream in finishing { stream.finish() }
    }
}
