import Testing

@testable import ArbiterClusterServer

/// `RelayRefusalEpisodes` alone: what reaches the log of a run of refusals, tick by tick.
@Suite("relay refusal episodes")
struct RelayRefusalEpisodesTests {
    typealias Line = RelayRefusalEpisodes.Line

    @Test func theFirstIsLoggedTheRestCountedOncePerTickThenTheEndWithTheTotal() {
        var episodes = RelayRefusalEpisodes()
        #expect(!episodes.isOpen)
        #expect(
            episodes.refused(.busy, peer: "10.0.0.2:1", reason: "busy: a")
                == Line(message: .refused, kind: .busy, peer: "10.0.0.2:1", reason: "busy: a", count: 1, total: 1))
        for i in 2...1000 { #expect(episodes.refused(.busy, peer: "10.0.0.2:\(i)", reason: "busy: b") == nil) }
        #expect(episodes.isOpen)
        #expect(episodes.tick() == [Line(message: .summary, kind: .busy, peer: "10.0.0.2:1000", reason: "busy: b", count: 999, total: 1000)])
        #expect(episodes.refused(.busy, peer: "10.0.0.3:1", reason: "busy: c") == nil)
        #expect(episodes.tick() == [Line(message: .summary, kind: .busy, peer: "10.0.0.3:1", reason: "busy: c", count: 1, total: 1001)])
        #expect(episodes.tick() == [Line(message: .ended, kind: .busy, peer: "10.0.0.3:1", reason: "busy: c", count: 0, total: 1001)])
        #expect(!episodes.isOpen)
        #expect(episodes.tick().isEmpty)
        // The next refusal opens a new episode, logged in full.
        #expect(episodes.refused(.busy, peer: "10.0.0.4:1", reason: "busy: d")?.message == .refused)
    }

    @Test func aLoneRefusalEndsWithoutAnotherLine() {
        var episodes = RelayRefusalEpisodes()
        #expect(episodes.refused(.wrongKey, peer: "10.0.0.2:1", reason: "wrong")?.message == .refused)
        #expect(episodes.tick().isEmpty)
        #expect(!episodes.isOpen)
    }

    @Test func kindsHaveEpisodesOfTheirOwn() {
        var episodes = RelayRefusalEpisodes()
        #expect(episodes.refused(.busy, peer: "10.0.0.2:1", reason: "busy")?.message == .refused)
        #expect(episodes.refused(.busy, peer: "10.0.0.2:2", reason: "busy") == nil)
        // A wrong key during a flood is still said at once.
        #expect(episodes.refused(.wrongKey, peer: "10.0.0.9:1", reason: "wrong key")?.message == .refused)
        #expect(episodes.refused(.tooSlow, peer: "10.0.0.2:3", reason: "slow")?.message == .refused)
        #expect(episodes.refused(.tooSlow, peer: "10.0.0.2:4", reason: "slow") == nil)
        #expect(episodes.tick().map { "\($0.message) \($0.kind) \($0.count)" } == ["summary busy 1", "summary tooSlow 1"])
        #expect(episodes.tick().map { "\($0.message) \($0.kind) \($0.total)" } == ["ended busy 2", "ended tooSlow 2"])
        #expect(!episodes.isOpen)
    }
}
