import Synchronization

/// What every engine of a run reads and never changes: the options, the panel's
/// buttons, the command bytes, and the shared press table, control and checker.
final class RunPlan: Sendable {
    let options: LoadOptions
    let table: ButtonTable?
    /// The buttons pressers choose among (indices into `table`, or Redis keys).
    let pressButtons: [Int32]
    let commands: CommandBook
    let presses = PressTable()
    let control: RunControl
    /// Guarded by its lock; engines feed it in batches.
    let checker: Mutex<SafetyChecker>?
    /// Ids of Redis publishes, unique across threads.
    let publishCounter = Atomic<Int64>(1)

    init(options: LoadOptions, table: ButtonTable?, pressButtons: [Int32], buttonNames: [String],
         control: RunControl, checker: sending SafetyChecker?) {
        self.options = options
        self.table = table
        self.pressButtons = pressButtons
        self.commands = CommandBook(panel: options.panel, buttons: buttonNames, lockTTLms: options.lockTTLms)
        self.control = control
        if let checker {
            self.checker = Mutex(checker)
        } else {
            self.checker = nil
        }
    }
}
