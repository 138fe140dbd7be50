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
