/// A `down` in progress: until it is written it can be withdrawn by an `up` or `cancel`
/// of the same button (a finger lifted while the press still waited for a connection).
struct DownTicket {
    let panel: String
    let button: String
    var sent = false
    var withdrawn = false
}
