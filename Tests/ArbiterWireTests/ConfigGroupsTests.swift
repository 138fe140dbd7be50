import ArbiterCore
import Testing
@testable import ArbiterWire

@Suite("config file: group policies")
struct ConfigGroupsTests {
    func decode(_ s: String) throws(ConfigDecoder.Failure) -> [PanelConfig] {
        try ConfigDecoder.decode(Array(s.utf8))
    }

    func failure(_ s: String) -> String? {
        do { _ = try decode(s); return nil } catch { return error.description }
    }

    /// A panel with a `main` group of taps, a `quiz` group of taps and a hold group.
    func panel(groups: String) -> String {
        #"{"panels":[{"id":"p","buttons":[{"id":"a"},{"id":"r","group":"quiz"},{"id":"h","kind":"hold","group":"sos"}],"groups":"#
            + groups + "}]}"
    }

    @Test func theIssueExample() throws {
        let p = try decode(panel(groups: #"{"main":{"policy":"queue","max_queue":16},"quiz":{"policy":"buzzer","early_lockout_ms":250}}"#))[0]
        #expect(p.policy(ofGroup: "main") == .queue(maxQueue: 16))
        #expect(p.policy(ofGroup: "quiz") == .buzzer(earlyLockoutMs: 250, decisionWindowUs: GroupPolicy.defaultDecisionWindowUs))
        #expect(p.policy(ofGroup: "sos") == .exclusive)
    }

    @Test func defaults() throws {
        let p = try decode(panel(groups: #"{"main":{"policy":"queue"},"quiz":{"policy":"buzzer"},"sos":{}}"#))[0]
        #expect(p.groups["main"] == .queue(maxQueue: GroupPolicy.defaultMaxQueue))
        #expect(p.groups["quiz"] == .buzzer(earlyLockoutMs: GroupPolicy.defaultEarlyLockoutMs, decisionWindowUs: 2000))
        #expect(p.groups["sos"] == .exclusive)
    }

    /// `decision_window_us`: 0 decides each press as it is read; at most 100 ms.
    @Test func theDecisionWindowIsConfigured() throws {
        let zero = try decode(panel(groups: #"{"quiz":{"policy":"buzzer","decision_window_us":0}}"#))[0]
        #expect(zero.groups["quiz"] == .buzzer(earlyLockoutMs: 250, decisionWindowUs: 0))
        let most = try decode(panel(groups: #"{"quiz":{"policy":"buzzer","decision_window_us":100000}}"#))[0]
        #expect(most.groups["quiz"] == .buzzer(earlyLockoutMs: 250, decisionWindowUs: 100_000))
        #expect(
            failure(panel(groups: #"{"quiz":{"policy":"buzzer","decision_window_us":100001}}"#))
                == "panels[0].groups.quiz.decision_window_us: must be between 0 and 100000, not 100001")
        #expect(
            failure(panel(groups: #"{"quiz":{"policy":"buzzer","decision_window_us":0.5}}"#))?.hasPrefix(
                "panels[0].groups.quiz.decision_window_us: must be a whole number of microseconds") == true)
        #expect(
            failure(panel(groups: #"{"main":{"policy":"queue","decision_window_us":5}}"#))?.hasPrefix(
                #"panels[0].groups.main: unknown field "decision_window_us""#) == true)
    }

    @Test func aPanelWithoutGroupsIsUnchanged() throws {
        let p = try decode(#"{"panels":[{"id":"p","buttons":[{"id":"a"}]}]}"#)[0]
        #expect(p.groups.isEmpty)
        #expect(p.policy(ofGroup: "main") == .exclusive)
    }

    @Test func errorsNameThePath() {
        #expect(
            failure(panel(groups: #"{"main":{"policy":"lottery"}}"#))
                == #"panels[0].groups.main.policy: must be exclusive, queue or buzzer, not "lottery""#)
        #expect(
            failure(panel(groups: #"{"main":{"policy":"queue","max_queue":-1}}"#))
                == "panels[0].groups.main.max_queue: must be between 1 and 100000, not -1")
        #expect(
            failure(panel(groups: #"{"main":{"policy":"queue","max_queue":1.5}}"#))?.hasPrefix("panels[0].groups.main.max_queue: must be a whole number")
                == true)
        #expect(
            failure(panel(groups: #"{"quiz":{"policy":"buzzer","early_lockout_ms":-5}}"#))?.hasPrefix(
                "panels[0].groups.quiz.early_lockout_ms: must be between 0") == true)
        #expect(
            failure(panel(groups: #"{"sos":{"policy":"buzzer"}}"#))
                == "panels[0].groups.sos.policy: a buzzer group holds tap buttons only, and panels[0].buttons[2] (h) is hold")
        #expect(
            failure(panel(groups: #"{"main":{"policy":"queue","early_lockout_ms":5}}"#))?.hasPrefix(#"panels[0].groups.main: unknown field "early_lockout_ms""#)
                == true)
        #expect(failure(panel(groups: #"{"nope":{"policy":"queue"}}"#))?.hasPrefix(#"panels[0].groups: unknown field "nope""#) == true)
        #expect(failure(panel(groups: #"{"main":{"policy":7}}"#))?.hasPrefix("panels[0].groups.main.policy: must be a string") == true)
        #expect(failure(panel(groups: #"[]"#))?.hasPrefix("panels[0].groups: must be an object") == true)
    }
}
