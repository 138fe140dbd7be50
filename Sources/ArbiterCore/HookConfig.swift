/// One webhook of a panel: where the panel's chosen events are POSTed as they are
/// broadcast (docs/GUIDE.md, "Webhooks").
public struct HookConfig: Sendable, Equatable {
    public var url: String
    /// Lower-case event names among `eventNames`.
    public var events: [String]
    /// Indexes into the panel's buttons; nil for every button.
    public var buttons: [Int]?
    /// As written in the config; the loader resolves it and fills `secret`.
    public var secretFile: String?
    /// The key bytes of `secretFile` (after `whsec_`), read once at start.
    public var secret: [UInt8]?
    /// Total time one attempt may take, connecting included.
    public var timeoutMs: Int64
    /// How long an undelivered event is retried before it is dropped.
    public var maxAgeS: Int64
    /// Deliveries waiting per hook; past it the newest are dropped.
    public var maxPending: Int

    public static let eventNames = [
        "pressed", "fired", "released", "tapped", "started", "stopped", "cancelled", "buzzed", "armed", "closed", "queued", "dequeued",
    ]
    public static let defaultEvents = ["fired"]
    public static let defaultTimeoutMs: Int64 = 5000
    public static let defaultMaxAgeS: Int64 = 86_400
    public static let defaultMaxPending = 10_000

    public init(
        url: String, events: [String] = HookConfig.defaultEvents, buttons: [Int]? = nil, secretFile: String? = nil, secret: [UInt8]? = nil,
        timeoutMs: Int64 = HookConfig.defaultTimeoutMs, maxAgeS: Int64 = HookConfig.defaultMaxAgeS, maxPending: Int = HookConfig.defaultMaxPending
    ) {
        self.url = url
        self.events = events
        self.buttons = buttons
        self.secretFile = secretFile
        self.secret = secret
        self.timeoutMs = timeoutMs
        self.maxAgeS = maxAgeS
        self.maxPending = maxPending
    }

    /// The name a hook's `events` uses for `kind`; nil for events no hook may watch
    /// (progress, presence, membership).
    public static func eventName(_ kind: PanelEvent.Kind) -> String? {
        switch kind {
        case .pressed: "pressed"
        case .fired: "fired"
        case .released: "released"
        case .tapped: "tapped"
        case .started: "started"
        case .stopped: "stopped"
        case .cancelled: "cancelled"
        case .buzzed: "buzzed"
        case .armed: "armed"
        case .closed: "closed"
        case .queued: "queued"
        case .dequeued: "dequeued"
        case .progress, .midway, .joined, .left, .presence: nil
        }
    }
}
