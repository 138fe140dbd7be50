import ArbiterCore

extension MessageEncoder {
    /// `RELEASED <p> <b> reason=failover owner=<o> fence=<f>`: a grant of a term whose
    /// leader stopped deciding. No `seq`: the leader that numbered the chain is gone, and
    /// each node tells its own members (docs/CLUSTER.md, "What members see at a failover").
    public static func encodeFailoverRelease(panel: PanelConfig, button: Int, owner: String, fence: UInt64, format: WireFormat, into out: inout [UInt8]) {
        func describe<S: MessageSink>(into s: inout S) {
            s.begin("RELEASED", "released")
            s.arg("panel", panel.id)
            s.arg("button", panel.buttons[button].id)
            s.string("reason", ReleaseReason.failover.rawValue)
            s.string("owner", owner)
            s.int("fence", fence)
            s.end(id: nil)
        }
        switch format {
        case .text: with(TextSink.self, &out) { describe(into: &$0) }
        case .json: with(JSONSink.self, &out) { describe(into: &$0) }
        }
    }
}

extension MessageEncoder {
    /// `DEQUEUED <p> <b> name=<n> session=<s> position=<k> reason=failover`: a waiter's place
    /// in a queue group's line, gone with the term that kept the line. No `seq`, like the
    /// failover release: each node tells its own waiters, whether they joined or not, as
    /// a hand-off's GRANTED reaches the head whether it joined or not.
    public static func encodeFailoverDequeue(
        panel: PanelConfig, button: Int, name: String, session: SessionID, position: Int, format: WireFormat, into out: inout [UInt8]
    ) {
        func describe<S: MessageSink>(into s: inout S) {
            s.begin("DEQUEUED", "dequeued")
            s.arg("panel", panel.id)
            s.arg("button", panel.buttons[button].id)
            s.string("name", name)
            s.string("session", session.description)
            s.int("position", position)
            s.string("reason", DequeueReason.failover.rawValue)
            s.end(id: nil)
        }
        switch format {
        case .text: with(TextSink.self, &out) { describe(into: &$0) }
        case .json: with(JSONSink.self, &out) { describe(into: &$0) }
        }
    }
}
