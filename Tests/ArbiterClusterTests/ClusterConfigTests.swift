import ArbiterCore
import ArbiterIO
import Testing
@testable import ArbiterCluster

@Suite struct ClusterConfigTests {
    let key = Array("cluster secret".utf8)

    func panels(holdMs: Int64 = 3000, adminKey: String? = "a1") -> [PanelConfig] {
        [
            PanelConfig(
                id: "lobby",
                buttons: [
                    ButtonConfig(id: "door", kind: .tap),
                    ButtonConfig(id: "sos", kind: .hold, group: "emergency", holdMs: holdMs),
                ], keys: PanelKeys(admin: adminKey)),
            PanelConfig(id: "stage", buttons: [ButtonConfig(id: "talk", kind: .talk, group: "talk")]),
        ]
    }

    @Test func equalConfigsHaveEqualDigestsAndNoDifference() {
        let a = ClusterConfig(panels: panels(), clusterKey: key)
        let b = ClusterConfig(panels: panels(), clusterKey: key)
        #expect(a.digest == b.digest)
        #expect(a.digest.count == 64)
        #expect(a.firstDifference(from: b) == nil)
        #expect(ClusterConfig(text: a.text) == a)
    }

    @Test func thePresenceSizeIsWrittenOnlyWhenSetSoOlderStoredFormsStillAgree() {
        let plain = ClusterConfig(panels: panels(), clusterKey: key)
        #expect(!plain.text.contains("presence_summary_above"))
        var large = panels()
        large[1].presenceSummaryAbove = 500
        let set = ClusterConfig(panels: large, clusterKey: key)
        #expect(set.digest != plain.digest)
        #expect(set.lines.contains("panels[1].presence_summary_above 500"))
    }

    func quiz(_ policy: GroupPolicy) -> [PanelConfig] {
        var quiz = panels()
        quiz[0].buttons.append(ButtonConfig(id: "buzz", kind: .tap, group: "quiz"))
        quiz[0].groups["quiz"] = policy
        return quiz
    }

    @Test func aGroupsPolicyIsComparedFieldByField() {
        let cluster = ClusterConfig(panels: quiz(.buzzer(earlyLockoutMs: 250, announce: 10, decisionWindowUs: 2000)), clusterKey: key)
        #expect(cluster.lines.contains(#"panels[0].groups.quiz.policy "buzzer""#))
        let announce = ClusterConfig(panels: quiz(.buzzer(earlyLockoutMs: 250, announce: 25, decisionWindowUs: 2000)), clusterKey: key)
        #expect(announce.firstDifference(from: cluster) == "panels[0].groups.quiz.announce 25 vs 10")
        let window = ClusterConfig(panels: quiz(.buzzer(earlyLockoutMs: 250, announce: 10, decisionWindowUs: 0)), clusterKey: key)
        #expect(window.firstDifference(from: cluster) == "panels[0].groups.quiz.decision_window_us 0 vs 2000")
        let queue = ClusterConfig(panels: quiz(.queue(maxQueue: 16)), clusterKey: key)
        #expect(queue.firstDifference(from: cluster) == #"panels[0].groups.quiz.policy "queue" vs "buzzer""#)
        // An exclusive group written out is what an undescribed one is.
        let exclusive = ClusterConfig(panels: quiz(.exclusive), clusterKey: key)
        #expect(!exclusive.text.contains(".groups."))
        var undescribed = quiz(.exclusive)
        undescribed[0].groups = [:]
        #expect(exclusive.firstDifference(from: ClusterConfig(panels: undescribed, clusterKey: key)) == nil)
    }

    @Test func aConfigStoredWithoutGroupsAgreesWithThisBuildsForARollingUpgrade() {
        let mine = ClusterConfig(panels: quiz(.buzzer(earlyLockoutMs: 250, announce: 10, decisionWindowUs: 2000)), clusterKey: key)
        // What a build that wrote no groups stored: no mark, no group lines.
        let older = ClusterConfig(text: mine.lines.filter { !$0.hasPrefix("groups-described") && !$0.contains(".groups.") }.joined(separator: "\n"))!
        #expect(mine.firstDifference(from: older) == nil)
        // Stored by this build, the same config without the policy differs.
        let plain = ClusterConfig(panels: quiz(.exclusive), clusterKey: key)
        #expect(plain.firstDifference(from: mine) == "panels[0].buttons[0].id vs panels[0].groups.quiz.policy (a group's policy is described on one side only)")
    }

    func hooked(secret: String?) -> [PanelConfig] {
        var p = panels()
        p[0].hooks = [HookConfig(url: "http://127.0.0.1:9/in", events: ["fired", "pressed"], buttons: [1], secret: secret.map { Array($0.utf8) })]
        return p
    }

    @Test func aHookSecretIsComparedByItsDigestNeverInClear() throws {
        let mine = ClusterConfig(panels: hooked(secret: "hook secret one"), clusterKey: key)
        #expect(!mine.text.contains("hook secret one"))
        let secretLine = try #require(mine.lines.first { $0.hasPrefix("panels[0].hooks[0].secret ") })
        #expect(secretLine.hasPrefix(#"panels[0].hooks[0].secret "hmac:"#))
        // The same secret: the node joins.
        #expect(mine.refusal(node: "b", cluster: ClusterConfig(panels: hooked(secret: "hook secret one"), clusterKey: key)) == nil)
        // Another one: refused, and the refusal shows neither secret nor digest.
        let other = ClusterConfig(panels: hooked(secret: "hook secret two"), clusterKey: key)
        let refusal = try #require(mine.refusal(node: "b", cluster: other))
        #expect(refusal.hasSuffix("panels[0].hooks[0].secret differs"))
        #expect(!refusal.contains("hmac:"))
        // None where the cluster has one: refused too.
        #expect(ClusterConfig(panels: hooked(secret: nil), clusterKey: key).refusal(node: "b", cluster: mine) != nil)
    }

    @Test func hookLessPanelsKeepTheirStoredFormSoOlderNodesStillAgree() {
        let plain = ClusterConfig(panels: panels(), clusterKey: key)
        #expect(!plain.text.contains("hooks"))
        let hooked = ClusterConfig(panels: hooked(secret: "s"), clusterKey: key)
        #expect(hooked.lines.contains(#"panels[0].hooks[0].url "http://127.0.0.1:9/in""#))
        #expect(hooked.lines.contains("panels[0].hooks[0].buttons [1]"))
        #expect(hooked.refusal(node: "b", cluster: plain) != nil)
    }

    @Test func theRefusalNamesTheFirstDifferingField() {
        let mine = ClusterConfig(panels: panels(holdMs: 3000), clusterKey: key)
        let cluster = ClusterConfig(panels: panels(holdMs: 2000), clusterKey: key)
        #expect(mine.digest != cluster.digest)
        #expect(
            mine.refusal(node: "n2", cluster: cluster)
                == "node n2's config differs from the cluster's: panels[0].buttons[1].hold_ms 3000 vs 2000")
    }

    @Test func aPanelKeyDifferenceIsNamedWithoutShowingEitherKey() {
        let mine = ClusterConfig(panels: panels(adminKey: "secret-one"), clusterKey: key)
        let cluster = ClusterConfig(panels: panels(adminKey: "secret-two"), clusterKey: key)
        let difference = mine.firstDifference(from: cluster)
        #expect(difference == "panels[0].keys.admin differs")
        #expect(!mine.text.contains("secret-one"))
    }

    @Test func orderLabelsAndMissingButtonsCount() {
        var reordered = panels()
        reordered.swapAt(0, 1)
        let base = ClusterConfig(panels: panels(), clusterKey: key)
        #expect(ClusterConfig(panels: reordered, clusterKey: key).firstDifference(from: base) == #"panels[0].id "stage" vs "lobby""#)
        var relabeled = panels()
        relabeled[1].buttons[0].label = "Talk now"
        #expect(ClusterConfig(panels: relabeled, clusterKey: key).firstDifference(from: base) == #"panels[1].buttons[0].label "Talk now" vs "talk""#)
        var shorter = panels()
        shorter.removeLast()
        #expect(ClusterConfig(panels: shorter, clusterKey: key).firstDifference(from: base) == "panels[1].id is missing from this node's config")
        #expect(base.firstDifference(from: ClusterConfig(panels: shorter, clusterKey: key)) == "panels[1].id is not in the cluster's config")
        var extraButton = panels()
        extraButton[0].buttons.append(ButtonConfig(id: "bell", kind: .tap))
        #expect(
            ClusterConfig(panels: extraButton, clusterKey: key).firstDifference(from: base)
                == "panels[0].buttons[2].id vs panels[1].id (a panel or button is missing on one side)")
    }

    @Test func theFirstNodePublishesAndALaterOneIsComparedThroughEtcd() throws {
        let clock = ManualClock.forCluster()
        let etcd = InMemoryEtcd(clock: clock.read)
        let keys = ClusterKeys()
        let first = ClusterConfig(panels: panels(), clusterKey: key)
        #expect(first.verdict(on: try etcd.txn(first.publishTxn(keys: keys)), node: "n1") == nil)
        #expect(try etcd.get(keys.config)?.valueText == first.text)
        let same = ClusterConfig(panels: panels(), clusterKey: key)
        #expect(same.verdict(on: try etcd.txn(same.publishTxn(keys: keys)), node: "n2") == nil)
        let other = ClusterConfig(panels: panels(holdMs: 2000), clusterKey: key)
        #expect(
            other.verdict(on: try etcd.txn(other.publishTxn(keys: keys)), node: "n3")
                == "node n3's config differs from the cluster's: panels[0].buttons[1].hold_ms 2000 vs 3000")
        #expect(try etcd.get(keys.config)?.valueText == first.text, "a differing node must not overwrite the cluster's config")
    }

    @Test func aStoredTextOfAnotherShapeIsRefused() throws {
        let clock = ManualClock.forCluster()
        let etcd = InMemoryEtcd(clock: clock.read)
        let keys = ClusterKeys()
        try etcd.put(keys.config, "something else")
        let mine = ClusterConfig(panels: panels(), clusterKey: key)
        let verdict = mine.verdict(on: try etcd.txn(mine.publishTxn(keys: keys)), node: "n1")
        #expect(verdict?.contains("cannot read the cluster's config") == true)
    }
}

@Suite struct ClusterKeyCheckTests {
    let key = Array("cluster secret".utf8)

    func panels(adminKey: String? = nil) -> [PanelConfig] {
        [PanelConfig(id: "lobby", buttons: [ButtonConfig(id: "door", kind: .tap)], keys: PanelKeys(admin: adminKey))]
    }

    /// Without panel keys the two configs are otherwise equal: before the check, such a node
    /// joined and led panels that every other node's relay refused to reach.
    @Test(arguments: [nil, "a1"] as [String?])
    func aNodeWithAnotherClusterKeyIsRefusedForTheKey(adminKey: String?) {
        let cluster = ClusterConfig(panels: panels(adminKey: adminKey), clusterKey: key)
        let mine = ClusterConfig(panels: panels(adminKey: adminKey), clusterKey: Array("another secret".utf8))
        let refusal = mine.refusal(node: "n4", cluster: cluster)
        #expect(refusal?.hasPrefix("node n4's --cluster-key is not the cluster's: ") == true, "\(refusal ?? "nil")")
        #expect(refusal?.contains("keys.admin") == false, "the key is named, not the panel keys it also changes")
        #expect(ClusterConfig(panels: panels(adminKey: adminKey), clusterKey: key).refusal(node: "n2", cluster: cluster) == nil)
    }

    @Test func theCheckValueIsAMacNotTheKey() {
        let text = ClusterConfig(panels: panels(), clusterKey: key).text
        #expect(text.split(separator: "\n")[1].hasPrefix("cluster-key \"hmac:"))
        #expect(!text.contains("cluster secret"))
    }

    /// A config stored by a build without the check (a cluster upgraded with all nodes
    /// stopped keeps it in etcd) is compared on its fields: no refusal for the missing line.
    @Test func aStoredConfigWithoutTheCheckIsComparedOnItsFields() throws {
        let mine = ClusterConfig(panels: panels(), clusterKey: key)
        let old = try #require(ClusterConfig(text: mine.lines.filter { !$0.hasPrefix("cluster-key ") }.joined(separator: "\n")))
        #expect(old.lines.count == mine.lines.count - 1)
        #expect(mine.refusal(node: "n2", cluster: old) == nil)
        var relabeled = panels()
        relabeled[0].buttons[0].label = "Door"
        #expect(
            ClusterConfig(panels: relabeled, clusterKey: key).refusal(node: "n2", cluster: old)
                == #"node n2's config differs from the cluster's: panels[0].buttons[0].label "Door" vs "door""#)
    }

    @Test func theKeyIsComparedThroughEtcdBeforeAnyField() throws {
        let etcd = InMemoryEtcd(clock: ManualClock.forCluster().read)
        let keys = ClusterKeys()
        let first = ClusterConfig(panels: panels(), clusterKey: key)
        #expect(first.verdict(on: try etcd.txn(first.publishTxn(keys: keys)), node: "n1") == nil)
        var other = panels()
        other[0].buttons[0].label = "Door"
        let stranger = ClusterConfig(panels: other, clusterKey: Array("another secret".utf8))
        let verdict = stranger.verdict(on: try etcd.txn(stranger.publishTxn(keys: keys)), node: "n3")
        #expect(verdict?.hasPrefix("node n3's --cluster-key is not the cluster's") == true, "\(verdict ?? "nil")")
        #expect(try etcd.get(keys.config)?.valueText == first.text)
    }
}
