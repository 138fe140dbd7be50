import Testing
@testable import ArbiterServer

@Suite struct ByteSearchTests {
    let hay = Array("xxGRANTED lobby b1 fence=1001".utf8)

    @Test func findsANeedleInASliceByTheSlicesOwnIndices() {
        let slice = hay[2...]
        #expect(ByteSearch.start(of: Array(" fence=".utf8), in: slice) == 18)
        #expect(ByteSearch.start(of: Array("GRANTED".utf8), in: slice) == 2)
        #expect(ByteSearch.start(of: Array("1001".utf8), in: slice) == hay.count - 4)
    }

    @Test func missesWhatIsNotThere() {
        #expect(ByteSearch.start(of: Array("fence=1002".utf8), in: hay[...]) == nil)
        #expect(ByteSearch.start(of: [], in: hay[...]) == nil)
        #expect(ByteSearch.start(of: hay + [0x20], in: hay[...]) == nil)
        // Found only past the slice's end.
        #expect(ByteSearch.start(of: Array("1001".utf8), in: hay[..<(hay.count - 1)]) == nil)
    }

    @Test func prefixesAreReadFromTheSlicesStart() {
        #expect(ByteSearch.hasPrefix(Array("GRANTED ".utf8), hay[2...]))
        #expect(!ByteSearch.hasPrefix(Array("GRANTED ".utf8), hay[...]))
        #expect(ByteSearch.hasPrefix([], hay[...]))
        #expect(!ByteSearch.hasPrefix(Array("GRANTED lobby".utf8), hay[2..<10]))
    }
}
