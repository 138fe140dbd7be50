import Testing

@testable import ArbiterClusterServer

/// `RelayHandshakeSlots` and `RelayPeerAddress` alone: which handshake may start, by
/// source and by whether the source is a registered node's address.
@Suite("relay handshake slots")
struct RelayHandshakeSlotsTests {
    final class Handshake {}

    static func slots(total: Int = 8, perSource: Int = 2, reserved: Int = 2) -> RelayHandshakeSlots {
        var options = RelayOptions()
        options.maxPendingHandshakes = total
        options.maxPendingHandshakesPerAddress = perSource
        options.handshakesReservedForNodes = reserved
        return RelayHandshakeSlots(options: options)
    }

    static func address(_ text: String) -> RelayPeerAddress? { RelayPeerAddress(hostPort: text) }

    @Test func oneSpellingPerMachine() {
        #expect(Self.address("10.0.0.7:51234") == Self.address("10.0.0.7:7070"))
        #expect(Self.address("[::ffff:10.0.0.7]:7070") == Self.address("10.0.0.7:1"))
        #expect(Self.address("localhost:7070") == Self.address("127.0.0.1:5"))
        #expect(Self.address("[fd00:0::7]:7070") == Self.address("[fd00::7]:9"))
        #expect(Self.address("10.0.0.7:1") != Self.address("10.0.0.8:1"))
        #expect(Self.address("arbiter-1:7070") == nil)
        #expect(Self.address("10.0.0.7") == nil)
        // An IPv6 source is bounded by its /64.
        #expect(Self.address("[fd00::1:7]:1")?.source == Self.address("[fd00::2:9]:1")?.source)
        #expect(Self.address("[fd00:0:0:1::7]:1")?.source != Self.address("[fd00::7]:1")?.source)
    }

    @Test func eachSourceTakesAtMostItsShare() {
        var slots = Self.slots()
        let a = Self.address("10.0.0.2:1")
        let held = (0..<3).map { _ in Handshake() }
        #expect(slots.take(ObjectIdentifier(held[0]), from: a, fromNode: false, host: "10.0.0.2") == nil)
        #expect(slots.take(ObjectIdentifier(held[1]), from: a, fromNode: false, host: "10.0.0.2") == nil)
        #expect(slots.take(ObjectIdentifier(held[2]), from: a, fromNode: false, host: "10.0.0.2") == "busy: 2 relay handshakes under way from 10.0.0.2")
        slots.release(ObjectIdentifier(held[0]))
        // Released twice, or never held: nothing changes.
        slots.release(ObjectIdentifier(held[0]))
        slots.release(ObjectIdentifier(held[2]))
        #expect(slots.count == 1 && slots.strangerCount == 1)
        #expect(slots.take(ObjectIdentifier(held[2]), from: a, fromNode: false, host: "10.0.0.2") == nil)
    }

    @Test func strangersLeaveTheReserveToNodes() {
        var slots = Self.slots()
        var held: [Handshake] = []
        func take(_ source: String, fromNode: Bool) -> String? {
            let handshake = Handshake()
            let refusal = slots.take(ObjectIdentifier(handshake), from: Self.address("\(source):1"), fromNode: fromNode, host: source)
            if refusal == nil { held.append(handshake) }
            return refusal
        }
        for source in ["10.0.0.2", "10.0.0.3", "10.0.0.4"] {
            #expect(take(source, fromNode: false) == nil)
            #expect(take(source, fromNode: false) == nil)
        }
        #expect(take("10.0.0.5", fromNode: false) == "busy: 6 relay handshakes under way from addresses of no registered node")
        #expect(take("10.0.0.11", fromNode: true) == nil)
        #expect(take("10.0.0.12", fromNode: true) == nil)
        #expect(take("10.0.0.13", fromNode: true) == "busy: 8 relay handshakes under way")
        #expect(slots.count == 8 && slots.strangerCount == 6)
        // A node's handshake that ends gives its slot back to nodes only.
        slots.release(ObjectIdentifier(held.removeLast()))
        #expect(take("10.0.0.5", fromNode: false) == "busy: 6 relay handshakes under way from addresses of no registered node")
        #expect(take("10.0.0.13", fromNode: true) == nil)
    }

    @Test func anAddressThatCannotBeReadIsOneSource() {
        var slots = Self.slots()
        let held = (0..<3).map { _ in Handshake() }
        #expect(slots.take(ObjectIdentifier(held[0]), from: nil, fromNode: false, host: "?") == nil)
        #expect(slots.take(ObjectIdentifier(held[1]), from: nil, fromNode: false, host: "?") == nil)
        #expect(slots.take(ObjectIdentifier(held[2]), from: nil, fromNode: false, host: "?") == "busy: 2 relay handshakes under way from ?")
    }
}
