/// What one server message is, whichever form (text line or JSON) it came in.
public enum MessageKind: UInt8, Sendable, Equatable {
    case welcome, okHello, okJoin, okLeave, okUp, okCancel, okQuit, okOther
    /// `OK BYE`: the server's last words (it shuts down, or the connection idled).
    case okBye
    case granted, denied, button, error, pong, help, panelInfo, record
    /// Replies of fair groups: a place in a queue's line, a place in a buzzer round.
    case queued, ranked
    /// Snapshot lines of fair groups: WAITING (read past), ROUND and RANK (a buzzer
    /// round's state and its ranks, which the checker's model starts from).
    case groupState, roundState, rankState
    case pressed, fired, progress, midway, tapped, started, stopped, cancelled, released, joined, left
    /// A large panel's joins and leaves as counts, one per tick. (A large panel's joiner
    /// reads its own JOINED with no seq: outside the chain, `seq < 0`.)
    case presence
    /// Events of fair groups; `queuedEvent` is QUEUED with a `seq` (the reply has none).
    case queuedEvent, dequeued, armed, buzzed, closed
    case unknown

    /// Panel events carry a `seq` and go to every member.
    public var isEvent: Bool { rawValue >= MessageKind.pressed.rawValue && self != .unknown }

    /// The wire verb, for printing a message back.
    public var verb: String {
        switch self {
        case .welcome: "WELCOME"
        case .okHello: "OK HELLO"
        case .okJoin: "OK JOIN"
        case .okLeave: "OK LEAVE"
        case .okUp: "OK UP"
        case .okCancel: "OK CANCEL"
        case .okQuit: "OK QUIT"
        case .okOther: "OK"
        case .okBye: "OK BYE"
        case .granted: "GRANTED"
        case .denied: "DENIED"
        case .button: "BUTTON"
        case .error: "ERROR"
        case .pong: "PONG"
        case .help: "#"
        case .panelInfo: "PANEL"
        case .record: "RECORD"
        case .pressed: "PRESSED"
        case .fired: "FIRED"
        case .progress: "PROGRESS"
        case .midway: "MIDWAY"
        case .tapped: "TAPPED"
        case .started: "STARTED"
        case .stopped: "STOPPED"
        case .cancelled: "CANCELLED"
        case .released: "RELEASED"
        case .joined: "JOINED"
        case .left: "LEFT"
        case .presence: "PRESENCE"
        case .queued, .queuedEvent: "QUEUED"
        case .ranked: "RANKED"
        case .groupState: "WAITING"
        case .roundState: "ROUND"
        case .rankState: "RANK"
        case .dequeued: "DEQUEUED"
        case .armed: "ARMED"
        case .buzzed: "BUZZED"
        case .closed: "CLOSED"
        case .unknown: "?"
        }
    }
}
