import ArbiterCLI
import Testing

@Suite struct FlagReaderTests {
    @Test func flagsTakeSeparateAndInlineValues() throws {
        var reader = FlagReader(["--port", "7071", "--host=::1", "contend", "--json"])
        var seen: [String] = []
        for _ in 0..<10 {
            guard let (argument, flag, inline) = reader.next() else { break }
            switch flag {
            case "--port", "--host": seen.append("\(flag)=\(try reader.value(flag, inline))")
            default: seen.append(argument)
            }
        }
        #expect(seen == ["--port=7071", "--host=::1", "contend", "--json"])
        #expect(reader.next() == nil)
    }

    @Test func aValueIsNeverAnotherFlag() throws {
        var reader = FlagReader(["--config", "--port", "1"])
        let next = reader.next()
        let first = try #require(next)
        #expect(throws: UsageError(message: "missing value for --config")) { try reader.value(first.flag, first.inline) }
        // The flag that was not swallowed is read next.
        #expect(reader.next()?.flag == "--port")

        var atEnd = FlagReader(["--port"])
        _ = atEnd.next()
        #expect(throws: UsageError(message: "missing value for --port")) { try atEnd.value("--port", nil) }
        // An inline value may itself start with dashes: it was written on purpose.
        var inline = FlagReader(["--panel=--x"])
        let read = inline.next()
        let only = try #require(read)
        #expect(try inline.value(only.flag, only.inline) == "--x")
    }

    @Test func numbersOutsideTheirRangeSayTheRange() throws {
        #expect(try FlagReader.number("--rate", "0", 0...10) == 0)
        #expect(throws: UsageError(message: "--rate must be a whole number from 0 to 10, not '11'")) {
            try FlagReader.number("--rate", "11", 0...10)
        }
        #expect(throws: UsageError(message: "--rate must be a whole number from 0 to 10, not 'ten'")) {
            try FlagReader.number("--rate", "ten", 0...10)
        }
    }

    @Test func unknownFlagsNameTheNearestOnlyWhenNear() {
        let known = ["--port", "--host", "--journal"]
        #expect(FlagReader.unknown("--prot", flag: "--prot", known: known).message == "unknown argument '--prot'; did you mean --port?")
        #expect(
            FlagReader.unknown("--jornal=x", flag: "--jornal", known: known).message
                == "unknown argument '--jornal=x'; did you mean --journal?")
        #expect(FlagReader.unknown("--verbose", flag: "--verbose", known: known).message == "unknown argument '--verbose'")
        // A bare word is not a mistyped flag.
        #expect(FlagReader.unknown("port", flag: "port", known: known).message == "unknown argument 'port'")
    }

    @Test func closestIsByEditDistance() {
        #expect(FlagReader.closest("fanot", among: ["contend", "fanout"], within: 3) == "fanout")
        #expect(FlagReader.closest("zzzzzz", among: ["contend", "fanout"], within: 3) == nil)
        #expect(FlagReader.closest("", among: ["ab"], within: 2) == "ab")
        #expect(FlagReader.closest("x", among: [], within: 3) == nil)
    }

    @Test func aBadCommandLineIsReportedWithWhereHelpIs() {
        #expect(
            CommandLineParse.report(UsageError(message: "missing value for --port"), program: "arbiter-load")
                == "error: missing value for --port\nRun 'arbiter-load --help' for usage.\n")
    }
}
