/// Writes the `--config` JSON of a panel for load runs (PROTOCOL.md section 8).
///
/// Tap buttons `b1..bN` each get their own group `g1..gN` (or are spread over
/// `groups`), with `timeout_ms` 0 so that no timeout ends a grant behind the
/// generator's back (the observer-free overlap check relies on it). Hold buttons
/// `h1..` and talk buttons `t1..` get their own groups too, and short times so that a
/// run sees many firings and talks. With `--panels N` every panel `<panel>1..N` gets
/// the same buttons: independent panels, for the server's multi-core scaling.
public enum ConfigWriter {
    public static func panelJSON(_ o: LoadOptions) -> String {
        let taps = o.buttons ?? (o.holdButtons + o.talkButtons > 0 ? 0 : 100)
        let groups = max(1, o.groups ?? taps)
        var buttons: [String] = []
        for i in 1...max(taps, 1) where taps > 0 {
            buttons.append(#"{ "id": "b\#(i)", "kind": "tap", "group": "g\#((i - 1) % groups + 1)", "timeout_ms": 0 }"#)
        }
        for i in 1...max(o.holdButtons, 1) where o.holdButtons > 0 {
            let progress = max(10, o.holdMs / 4)
            buttons.append(#"{ "id": "h\#(i)", "kind": "hold", "group": "hold\#(i)", "hold_ms": \#(o.holdMs), "progress_ms": \#(progress) }"#)
        }
        for i in 1...max(o.talkButtons, 1) where o.talkButtons > 0 {
            buttons.append(
                #"{ "id": "t\#(i)", "kind": "talk", "group": "talk\#(i)", "long_ms": \#(o.longMs), "min_talk_ms": \#(o.minTalkMs), "timeout_ms": 0 }"#)
        }
        let ids = o.panelIDs
        var policies = ""
        if let policy = o.policy, taps > 0 {
            var setting = policy == "queue" ? #""max_queue": \#(o.maxQueue)"# : #""early_lockout_ms": \#(o.earlyLockoutMs)"#
            if policy == "buzzer", let announce = o.announce { setting += #", "announce": \#(announce)"# }
            let groupList = (1...min(groups, taps)).map { #""g\#($0)": { "policy": "\#(policy)", \#(setting) }"# }
            policies = ",\n  \"groups\": { " + groupList.joined(separator: ", ") + " }"
        }
        let panels = ids.enumerated().map { i, id in
            let title = ids.count == 1 ? "Load" : "Load \(i + 1)"
            return """
                { "id": "\(id)", "title": "\(title)", "buttons": [
                    \(buttons.joined(separator: ",\n    "))
                ]\(policies) }
                """
        }
        return """
            { "panels": [ \(panels.joined(separator: ",\n  ")) ] }

            """
    }
}
