/// A grant of the panel model, from its PRESSED to its RELEASED.
struct OpenGrant {
    var pressed: WireMessage
    /// The stream that reported the PRESSED first (for the evidence).
    var witness: Int32
    var fired = 0
    /// Owned before the model started (a snapshot said `pressed`): fence unknown.
    var preexisting = false
}
