import ArbiterIO
import Synchronization

/// One panel under load (one Redis key space with `--redis`): its buttons, the command
/// bytes naming it, its fence->send-time table and its event checker. Fences and seqs
/// are per panel, so none of these are shared between panels.
final class PanelPlan: Sendable {
    /// Position in `RunPlan.panels`; peers name their panel by it.
    let index: Int
    let id: String
    /// nil for idle runs, which never read a button.
    let table: ButtonTable?
    /// The buttons pressers of this panel choose among (indices into `table`).
    let pressButtons: [Int32]
    let commands: CommandBook
    let presses = PressTable()
    /// buzz: the rounds the host has opened, and the players' answers (the winner's
    /// GRANTED, a RANKED) to presses of the newest one. With `announce` below the number
    /// of players the events tell nobody when every player is in, so the host counts these.
    let roundNumber = Atomic<Int>(0)
    let roundAnswers = Atomic<Int>(0)
    /// Guarded by its lock; engines feed it in batches. nil without a watching member.
    let checker: Locked<SafetyChecker>?
    /// Where this panel's buttons start in the run's global button numbering (the
    /// overlap checker's).
    let buttonOffset: Int

    init(index: Int, id: String, table: ButtonTable?, pressButtons: [Int32], lockTTLms: Int, checks: Bool, announce: Int, buttonOffset: Int) {
        self.index = index
        self.id = id
        self.table = table
        self.pressButtons = pressButtons
        self.commands = CommandBook(panel: id, buttons: table?.ids ?? [], lockTTLms: lockTTLms)
        self.buttonOffset = buttonOffset
        if checks, let table {
            let checker = SafetyChecker(buttons: table)
            checker.announce = announce
            self.checker = Locked(checker)
        } else {
            checker = nil
        }
    }
}
