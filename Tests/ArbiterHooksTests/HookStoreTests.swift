import ArbiterHooks
import Foundation
import Testing

@Suite struct HookStoreTests {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("store-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).hooks").path

    func delivery(_ seq: UInt64) -> HookDelivery {
        HookDelivery(id: "inc_demo_\(seq)", seq: seq, body: Array(#"{"type":"fired","label":"緊急 \"x\"","seq":\#(seq)}"#.utf8), createdWallMs: 1000 + Int64(seq))
    }

    @Test func whatWasNotDoneIsLoadedAgainByteForByteAndATornLineIsSkipped() throws {
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            let store = try HookStore(path: path, log: .silent)
            #expect(store.loaded.isEmpty)
            #expect(store.add((1...3).map { ("demo/0", "http://127.0.0.1:1/", delivery($0)) }))
            store.add([("demo/1", "http://127.0.0.1:2/", delivery(1))])
            store.done(hook: "demo/0", id: "inc_demo_2")
        }
        // A crash in the middle of a line.
        let handle = try #require(FileHandle(forWritingAtPath: path))
        handle.seekToEndOfFile()
        handle.write(Data(#"{"op":"done","hook":"demo/0","id":"inc_de"#.utf8))
        try handle.close()
        let store = try HookStore(path: path, log: .silent)
        #expect(store.loaded.map(\.hook) == ["demo/0", "demo/0", "demo/1"])
        #expect(store.loaded.map(\.delivery) == [delivery(1), delivery(3), delivery(1)])
        #expect(store.loaded[2].url == "http://127.0.0.1:2/")
    }

    @Test func theFileIsRewrittenToThePendingOnesOnceDoneOnesDominate() throws {
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try HookStore(path: path, log: .silent)
        store.add([("demo/0", "http://127.0.0.1:1/", delivery(0))])
        // Bounded: about 20,000 adds and dones of ~100 bytes pass the 1 MiB threshold.
        for seq in 1...20_000 {
            store.add([("demo/0", "http://127.0.0.1:1/", delivery(UInt64(seq)))])
            store.done(hook: "demo/0", id: "inc_demo_\(seq)")
        }
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        #expect(size < 1 << 20)
        let reopened = try HookStore(path: path, log: .silent)
        #expect(reopened.loaded.map(\.delivery) == [delivery(0)])
    }
}
