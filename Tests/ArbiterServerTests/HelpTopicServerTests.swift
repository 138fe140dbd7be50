import ArbiterCore
import ArbiterTestSupport
import ArbiterWire
import Foundation
import Testing

@Suite("HELP <topic> on a live server")
struct HelpTopicServerTests {
    @Test func oneCommandInTextAndJSON() throws {
        let server = try TestServer()
        let c = try server.client()
        c.send("HELP up")
        #expect(
            try c.readLines(through: "OK HELP") == [
                "# UP <panel> <button> [fence=<fence>] - release what you pressed (the button's action, if any)",
                #"# JSON: {"cmd":"up","panel":"<panel>","button":"<button>"[,"fence":<fence>]}"#,
                "OK HELP",
            ])
        c.send("HELP nope")
        let error = try c.readLine()
        #expect(error.hasPrefix("ERROR bad-syntax HELP has no topic nope"))
        c.send("HELP")
        let all = try c.readLines(through: "OK HELP")
        #expect(all.count == CommandSyntax.all.count + 2)
        #expect(all.contains("# HELP [topic] - this list; HELP <command> shows one command, text and JSON"))
        c.send(#"{"cmd":"help","topic":"down","id":7}"#)
        #expect(try c.readLine() == #"{"type":"help","line":"DOWN <panel> <button> - press: GRANTED with a fence, or DENIED","id":7}"#)
        #expect(try c.readLine() == #"{"type":"help","line":"JSON: {\"cmd\":\"down\",\"panel\":\"<panel>\",\"button\":\"<button>\"}","id":7}"#)
        #expect(try c.readLine() == #"{"type":"ok","re":"help","id":7}"#)
    }
}
