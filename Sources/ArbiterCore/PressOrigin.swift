/// Where a DOWN came from and when, as a buzzer group ranks and locks out by them: its
/// arrival on the server's clock, and its client's address (`Player`).
struct PressOrigin: Sendable {
    var arrival: Instant
    var address: String
}
