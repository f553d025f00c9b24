import CoexistModel
import Testing

@Suite struct RawInflateTests {
    @Test func corruptAndTruncatedStreamsAreErrors() {
        #expect(throws: RawInflate.Failure.self) { try RawInflate.inflate([0xFF, 0xFF, 0xFF]) }
        // A stored block header promising 5 bytes, with only 2 present.
        #expect(throws: RawInflate.Failure.self) { try RawInflate.inflate([0x01, 0x05, 0x00, 0xFA, 0xFF, 0x61, 0x62]) }
    }

    @Test func storedBlockInflates() throws {
        #expect(try RawInflate.inflate([0x01, 0x03, 0x00, 0xFC, 0xFF, 0x61, 0x62, 0x63]) == Array("abc".utf8))
    }

    @Test func outputLimitIsEnforced() {
        #expect(throws: RawInflate.Failure.tooLarge(limit: 2)) {
            try RawInflate.inflate([0x01, 0x03, 0x00, 0xFC, 0xFF, 0x61, 0x62, 0x63], limit: 2)
        }
    }
}
