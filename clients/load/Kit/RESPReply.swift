/// One Redis reply, as ranges into the read buffer (no copies).
///
/// Arrays keep their first four elements, which covers everything the generator reads:
/// pub/sub `message` and `subscribe` pushes are arrays of three bulk strings or
/// integers.
public struct RESPReply: Equatable {
    public enum Kind: Equatable {
        case simple, error, integer, bulk, null, array
    }

    public struct Element: Equatable {
        public var kind: Kind = .null
        public var range: Range<Int> = 0..<0
        public var integer: Int64 = 0
    }

    public var kind: Kind
    /// Simple string, error text or bulk payload.
    public var range: Range<Int> = 0..<0
    public var integer: Int64 = 0
    public var count = 0
    public var elements: (Element, Element, Element, Element) = (Element(), Element(), Element(), Element())

    public init(kind: Kind) {
        self.kind = kind
    }

    public func element(_ i: Int) -> Element {
        switch i {
        case 0: elements.0
        case 1: elements.1
        case 2: elements.2
        default: elements.3
        }
    }

    mutating func setElement(_ i: Int, _ e: Element) {
        switch i {
        case 0: elements.0 = e
        case 1: elements.1 = e
        case 2: elements.2 = e
        case 3: elements.3 = e
        default: break
        }
    }

    public static func == (a: RESPReply, b: RESPReply) -> Bool {
        a.kind == b.kind && a.range == b.range && a.integer == b.integer && a.count == b.count
            && (0..<min(a.count, 4)).allSatisfy { a.element($0) == b.element($0) }
    }
}
