import CoexistProtocol
import Foundation
import Testing

/// The writer's strings must read back as the text written, whatever the text holds: every ASCII byte
/// (the control characters, `"` and `\` among them), runs of them at either end, and UTF-8 above ASCII.
@Suite struct JSONWriterTests {
    private func roundTrip(_ text: String) throws -> String? {
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("text")
        writer.string(text)
        writer.key(named: text)
        writer.integer(1)
        writer.endObject()
        let object = try JSONSerialization.jsonObject(with: Data(writer.line)) as? [String: Any]
        #expect(object?[text] as? Int == 1, "the key \(text.debugDescription) did not read back")
        return object?["text"] as? String
    }

    @Test func everyASCIICharacterReadsBack() throws {
        for byte in UInt8(0)..<0x80 {
            let character = String(decoding: [byte], as: UTF8.self)
            for text in [character, "a\(character)b", "\(character)\(character)", "plain \(character)"] {
                #expect(try roundTrip(text) == text, "byte \(byte)")
            }
        }
    }

    /// A literal key is copied as it is, or escaped when it holds what a JSON string cannot (a literal is
    /// code, but the writer never trusts it to be plain).
    @Test func literalKeysReadBackEscapedOrNot() throws {
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("plain")
        writer.integer(1)
        writer.key("quote\" back\\ tab\t é")
        writer.integer(2)
        writer.key("é")
        writer.integer(3)
        writer.endObject()
        #expect(String(decoding: writer.bytes, as: UTF8.self).hasPrefix(#"{"plain":1,"quote\" back\\ tab\t é":2"#))
        let object = try JSONSerialization.jsonObject(with: Data(writer.line)) as? [String: Any]
        #expect(object?["plain"] as? Int == 1)
        #expect(object?["quote\" back\\ tab\t é"] as? Int == 2)
        #expect(object?["é"] as? Int == 3)
    }

    /// Commas are right at every depth, past 64 levels (where the writer keeps them apart) too, and a
    /// writer reused after `takeLine` and one copied from another each write their own message.
    @Test func deepNestingAndReuseKeepCommasAndBytesApart() throws {
        var writer = JSONWriter()
        for level in 0..<100 {
            writer.beginObject()
            writer.key("level")
            writer.integer(Int64(level))
            writer.key("next")
        }
        writer.null()
        for _ in 0..<100 { writer.endObject() }
        var object = try JSONSerialization.jsonObject(with: Data(writer.takeLine())) as? [String: Any]
        for level in 0..<100 {
            #expect(object?["level"] as? Int == level)
            object = object?["next"] as? [String: Any]
        }
        writer.beginArray()
        writer.integer(1)
        var copy = writer
        writer.integer(2)
        writer.endArray()
        copy.string("y")
        copy.string(String(repeating: "x", count: 1_000))
        copy.endArray()
        #expect(String(decoding: writer.takeLine(), as: UTF8.self) == "[1,2]\n")
        let long = String(repeating: "x", count: 1_000)
        #expect(String(decoding: copy.bytes, as: UTF8.self) == "[1,\"y\",\"" + long + "\"]")
    }

    @Test func textAboveASCIIIsCopiedAsItIs() throws {
        let texts = ["", "Grüße", "日本語のタスク", "emoji 🧪 \"quoted\" \\ tab\t", String(repeating: "é\n", count: 500)]
        for text in texts { #expect(try roundTrip(text) == text) }
    }

    @Test func nestingAndExtremeIntegersAreWrittenExactly() throws {
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("type")
        writer.string("event")
        writer.key("values")
        writer.beginArray()
        writer.integer(-9_223_372_036_854_775_808)
        writer.null()
        writer.endArray()
        writer.endObject()
        #expect(
            String(decoding: writer.line, as: UTF8.self)
                == "{\"type\":\"event\",\"values\":[-9223372036854775808,null]}\n"
        )
    }

    @Test func integersBooleansAndLinesAreWrittenExactly() throws {
        let numbers: [Int64] = [0, 7, -7, 10, -10, 1_000_000, Int64.max, Int64.min]
        var writer = JSONWriter()
        writer.beginArray()
        for number in numbers { writer.integer(number) }
        writer.bool(true)
        writer.bool(false)
        writer.null()
        writer.endArray()
        let expected = "[" + numbers.map(String.init).joined(separator: ",") + ",true,false,null]\n"
        #expect(String(decoding: writer.line, as: UTF8.self) == expected)
        // Taking the line gives the same bytes and leaves the writer empty for the next message.
        #expect(String(decoding: writer.takeLine(), as: UTF8.self) == expected)
        writer.beginObject()
        writer.key("a")
        writer.integer(1)
        writer.endObject()
        #expect(String(decoding: writer.takeLine(), as: UTF8.self) == "{\"a\":1}\n")
    }
}
