/// How many panels one node may lead: its fair share `ceil(P/N)` plus a slack. A node
/// campaigns only below the quota and sheds one panel at a time above it, so the nodes
/// settle with everyone at or under the quota, and the quota times N always covers P.
public enum PanelSpreading {
    public static func quota(panels: Int, nodes: Int, slack: Int) -> Int {
        let n = max(nodes, 1)
        return (panels + n - 1) / n + max(slack, 0)
    }
}
