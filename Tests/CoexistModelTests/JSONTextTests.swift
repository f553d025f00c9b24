import CoexistModel
import Foundation
import Testing

/// JSON text made by hand for statements' `json_each(?)` arguments reads back as what it was made from.
@Suite struct JSONTextTests {
    @Test func integerListsReadBackAsTheirValues() throws {
        let lists: [[Int64]] = [
            [], [0], [7], [-7], [10, 100, 1_000], [Int64.max, Int64.min, -1, 1], Array(-50...50),
            (0..<200).map { Int64(bitPattern: UInt64($0) &* 0x9E37_79B9_7F4A_7C15) },
        ]
        for values in lists {
            let text = JSONText.integers(values)
            #expect(text == "[" + values.map(String.init).joined(separator: ",") + "]")
            let decoded = try JSONDecoder().decode([Int64].self, from: Data(text.utf8))
            #expect(decoded == values)
        }
    }

    @Test func stringsReadBackAsThemselves() throws {
        let texts = [
            "", "plain", "quote \" and \\ backslash", "line\nbreak\ttab\u{1}", "é ☃ 𝄞",
            "\"at the start", "at the end\\", "\u{0}\u{1F}\u{7F}\"\"\\", "{\"a\":[1,\"b\"]}",
        ]
        for text in texts {
            let decoded = try JSONDecoder().decode([String].self, from: Data(("[" + JSONText.string(text) + "]").utf8))
            #expect(decoded == [text])
            var bytes: [UInt8] = []
            JSONText.append(text, to: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == JSONText.string(text))
        }
    }

    /// A plainly written list of strings reads back as itself without a decoder; any other text is left to
    /// one (nil), and what is read agrees with the decoder.
    @Test func plainStringListsReadWithoutADecoder() throws {
        for list in [[], [""], ["title"], ["title", "isCompleted", "é ☃ 𝄞"], ["a", "", "b"]] {
            #expect(JSONText.plainStrings(JSONText.strings(list)) == list)
        }
        for escaped in [["q\"x"], ["a\\b"], ["line\nbreak"], ["a/b", "c\u{1}"]] {
            #expect(JSONText.plainStrings(JSONText.strings(escaped)) == nil)
        }
        let texts = [
            "", "[", "]", "[]", "[\"a\"]", "[ \"a\"]", "[\"a\" ]", "[\"a\",]", "[,\"a\"]", "[\"a\"", "\"a\"",
            "[\"a\",\"b\"]]", "[[\"a\"]]", "[1]", "[\"a\"]x", "[\"a\\/b\"]", "[\"a\"\"b\"]", "[\"a\",\"b\"]",
        ]
        for text in texts {
            let decoded = try? JSONDecoder().decode([String].self, from: Data(text.utf8))
            if let plain = JSONText.plainStrings(text) { #expect(plain == decoded, "\(text)") }
        }
        #expect(JSONText.plainStrings("[\"a\",\"b\"]") == ["a", "b"])
        #expect(JSONText.plainStrings("[ \"a\"]") == nil)
        #expect(JSONText.plainStrings("[\"a\\/b\"]") == nil)
    }
}
