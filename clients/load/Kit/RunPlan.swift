import Synchronization

/// What every engine of a run reads and never changes: the options, the panels (their
/// buttons, command bytes, press tables and checkers), control and the overlap check.
final class RunPlan: Sendable {
    let options: LoadOptions
    let panels: [PanelPlan]
    let control: RunControl
    /// contend: the observer-free exclusivity check (nil with --no-check).
    let overlap: OverlapChecker?
    /// Ids of Redis publishes, unique across threads.
    let publishCounter = Atomic<Int64>(1)

    init(options: LoadOptions, panels: [PanelPlan], control: RunControl, overlap: OverlapChecker?) {
        self.options = options
        self.panels = panels
        self.control = control
        self.overlap = overlap
    }

    /// The button table of `panel`, if the run has one.
    @inline(__always)
    func table(_ panel: Int) -> ButtonTable? {
        panels[panel].table
    }
}
