import ArbiterTestSupport
import Foundation
import Testing

/// A bad `--config` as the operator sees it: one `error:` line with the file, where in
/// it and what is wrong, then exit 78. Not a log line saying the same again.
@Suite("end to end: config refusals")
struct ConfigRefusalTests {
    @Test func aSyntaxErrorIsPrintedOnceWithLineAndColumn() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("arbiter-cfg-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("hall.json")
        try Data("{\"panels\": [\n  {\"id\": \"hall\"\n   \"buttons\": []}]}\n".utf8).write(to: file)
        let result = try ArbiterProcess.run(["--port", "0", "--config", file.path])
        #expect(result.status == 78)
        #expect(result.stderr == "error: \(file.path): not valid JSON at line 3, column 4: expected ',' or '}'\n")

        try Data(#"{"panels":[{"id":"hall","buttons":[{"id":"b1","kind":"push"}]}]}"#.utf8).write(to: file)
        let semantic = try ArbiterProcess.run(["--port", "0", "--config", file.path])
        #expect(semantic.status == 78)
        #expect(semantic.stderr == "error: \(file.path): panels[0].buttons[0].kind: must be tap, hold or talk, not \"push\"\n")
    }
}
