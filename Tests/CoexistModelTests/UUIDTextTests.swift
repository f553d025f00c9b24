import CoexistModel
import Foundation
import Testing

/// UUID text both ways agrees with Foundation's, and anything that is not 8-4-4-4-12 hexadecimal digits is
/// refused.
@Suite struct UUIDTextTests {
    @Test func roundTripsAgreeWithFoundation() {
        for _ in 0..<1_000 {
            let bytes = UUIDText.randomBytes()
            let uuid = UUID(uuid: bytes.withUnsafeBytes { $0.load(as: uuid_t.self) })
            let text = UUIDText.text(bytes)
            #expect(text == uuid.uuidString.lowercased())
            #expect(UUIDText.bytes(uuid.uuidString) == bytes)
            #expect(text.flatMap(UUIDText.bytes) == bytes)
        }
        #expect(UUIDText.text([1, 2, 3]) == nil)
    }

    @Test func malformedTextIsRefused() {
        let valid = "0b7c6a52-8d1e-4c1f-9a4e-2f4de1c0a001"
        #expect(UUIDText.bytes(valid) != nil)
        for text in [
            "", String(valid.dropLast()), valid + "0", valid.replacingOccurrences(of: "-", with: "0"),
            "0b7c6a528-d1e-4c1f-9a4e-2f4de1c0a001", "0b7c6a52-8d1e-4c1f-9a4e-2f4de1c0a00g",
            "0b7c6a52-8d1e-4c1f-9a4e-2f4de1c0a0é", "0b7c6a52+8d1e-4c1f-9a4e-2f4de1c0a001",
        ] {
            #expect(UUIDText.bytes(text) == nil, "\(text)")
        }
    }
}
