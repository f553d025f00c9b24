import CoexistModel
import TestSupport
import Testing

@testable import CoexistLegacyStore

/// A Core Data row decoder reads a string, integer, boolean, number or date attribute's column as text,
/// integer or real without making an SQLite value first: for every attribute type and every storage class a
/// column can hold, what it gives (a value, or the refusal) is what decoding the column's value gives.
@Suite struct AttributeCodecTests {
    @Test(arguments: TypedColumnReads.types) func typedReadsGiveWhatTheValueGives(type: AttributeType) throws {
        try TypedColumnReads.check(
            type,
            typed: { try AttributeCodec.decode($0, at: 1, type: type, external: type == .binary) },
            plain: { try AttributeCodec.decode($0, type: type, external: type == .binary) }
        )
    }
}
