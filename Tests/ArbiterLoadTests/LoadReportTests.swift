import Testing
@testable import ArbiterLoadKit

/// The text report says what its figures are, and when not to trust them.
@Suite struct LoadReportTests {
    func result(_ arguments: [String], seconds: Double = 10, replies: Int = 1030, events: Int = 52_000) throws -> LoadResult {
        let options = try LoadOptions.parse(arguments)
        var r = LoadResult(options: options, target: "arbiter 127.0.0.1:7071")
        r.connections = options.connectionCount
        r.measuredSeconds = seconds
        r.stats.replies = replies
        r.stats.events = events
        r.checked = true
        r.eventsChecked = events
        return r
    }

    func lines(_ r: LoadResult) -> [String] {
        LoadReport.text(r).split(separator: "\n").map { String($0) }
    }

    @Test func fanoutLeadsWithEventsAndNamesThePressersFigure() throws {
        let text = lines(try result(["fanout", "--members", "50"]))
        let figures = text.filter { $0.hasPrefix("  events/s") || $0.contains("ops/s") }
        #expect(
            figures == [
                "  events/s      5,200   delivered to members",
                "  presser ops/s 103   replies to the pressers' DOWN and UP",
            ])
        // Other workloads keep replies first and say what they are.
        let contend = lines(try result(["contend"]))
        #expect(contend.contains("  ops/s         103   replies to timed requests"))
        #expect(!contend.contains { $0.contains("presser ops/s") })
        let ops = contend.firstIndex { $0.hasPrefix("  ops/s") } ?? -1
        let events = contend.firstIndex { $0.hasPrefix("  events/s") } ?? -1
        #expect(ops >= 0 && events > ops)
    }

    @Test func theLiveLineLeadsLikeTheReport() {
        let p = LiveProgress(
            elapsed: 2.04, phase: "measuring", opsPerSecond: 103, eventsPerSecond: 5200, p99: 1_500_000,
            errors: 0, ready: 51, total: 51)
        #expect(LoadReport.progress(p, workload: .fanout) == "[2.0 s] measuring 5,200 events/s  103 presser ops/s  p99 1.500 ms  errors 0")
        #expect(LoadReport.progress(p, workload: .contend) == "[2.0 s] measuring 103 ops/s  p99 1.500 ms  5,200 events/s  errors 0")
        var connecting = p
        connecting.phase = "connecting"
        connecting.ready = 7
        #expect(LoadReport.progress(connecting, workload: .fanout) == "[2.0 s] connecting 7/51")
    }

    @Test func zeroComparedSaysWhy() throws {
        let one = lines(try result(["contend"]))
        #expect(
            one.contains {
                $0.contains(
                    "52,000 events checked, 0 compared across members (comparing needs 2+ connections reading a panel's events: give --observers 2 or more)")
            },
            "\(one)")
        var two = try result(["contend", "--observers", "2"])
        two.eventsCompared = 4000
        #expect(lines(two).contains { $0.contains("4,000 compared across members;") || $0.hasSuffix("4,000 compared across members") })
        #expect(!LoadReport.text(two).contains("comparing needs"))
        var lonely = try result(["fanout", "--members", "1"])
        lonely.eventsCompared = 0
        #expect(LoadReport.text(lonely).contains("0 compared across members (comparing needs 2+ members of the panel: give --members 2 or more)"))
    }

    @Test func aBusyGeneratorMarksTheResultGeneratorBound() throws {
        var busy = try result(["contend"])
        busy.generatorCPU = 9.2
        #expect(busy.isGeneratorBound)
        let text = lines(busy)
        let note = text.firstIndex { $0.hasPrefix("  GENERATOR-BOUND  the generator used 92% of a core: it, not the server, may have set the pace") }
        let ops = text.firstIndex { $0.hasPrefix("  ops/s") }
        #expect(note != nil && ops != nil && note! < ops!, "\(text)")
        #expect(LoadReport.json(busy).contains("\"generator_bound\":true"))

        var idle = try result(["contend"])
        idle.generatorCPU = 8.9
        #expect(!idle.isGeneratorBound)
        #expect(!LoadReport.text(idle).contains("GENERATOR-BOUND"))
        #expect(LoadReport.json(idle).contains("\"generator_bound\":false"))

        // Two threads on two cores: 90% of each.
        var threads = try result(["contend", "--threads", "2"])
        threads.generatorCores = 2
        threads.generatorCPU = 15
        #expect(!threads.isGeneratorBound)
        threads.generatorCPU = 18.5
        #expect(threads.isGeneratorBound)
        #expect(LoadReport.text(threads).contains("the generator used 185% of a core (2 threads)"))
    }
}
