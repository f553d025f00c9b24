import CoexistProtocol
import FoundationEssentials
import Glibc

/// How `coexistctl tail` shows the stream on a terminal: one aligned line per change, led by its commit
/// time in local time, the object as entity and identity with its `Z_PK` in parentheses (the notation of
/// `history show` too), and with `--values` the values, cut to fit a line.
enum TailFormat {
    /// The longest values text printed on a line (the rest is cut with `…`).
    static let valuesWidth = 160

    /// The fields of an event the line shows beyond ``ServerMessage``'s.
    struct Extra: Decodable {
        var timestamp: String?
        var values: JSONValue?
    }

    /// The line for `message` (read from `line`), nil for messages tail does not print.
    static func text(_ message: ServerMessage, line: String, values: Bool) -> String? {
        switch message.type {
        case "event":
            let extra = try? JSONDecoder().decode(Extra.self, from: Data(line.utf8))
            let time = extra?.timestamp.flatMap(localTime) ?? "--:--:--.---"
            let side = (message.side ?? "?") + (message.mirror == true ? "*" : "")
            let author = pad(String(printable(message.author ?? "-").prefix(12)), 12)
            var text =
                "\(time)  \(pad(String(message.token ?? 0), 7, right: true))  \(pad(side, 7))  \(author)  "
                + "\(pad(message.change ?? "?", 6))  \(object(message))"
            if let properties = message.properties, !properties.isEmpty {
                text += "  " + properties.joined(separator: ",")
            }
            if values, let rendered = extra?.values.map({ printable($0.compact) }), rendered != "{}" {
                text += "  " + (rendered.count > valuesWidth ? rendered.prefix(valuesWidth - 1) + "…" : rendered)
            }
            return text
        case "end_of_backlog": return "-- live from token \(message.token ?? 0) --"
        case "error", "lagged":
            return "\(message.type): \(message.code ?? "") \(message.message ?? "") (token \(message.token ?? 0))"
        case "shutdown": return "-- coexistd stopped --"
        default: return nil
        }
    }

    /// `Task 6F1C…-… (Z_PK 17)`: the entity, the identity both schemas share, and the legacy key.
    static func object(_ message: ServerMessage) -> String {
        var text = printable(message.entity ?? "?")
        if let id = message.objectID { text += " " + printable(id) }
        if let pk = message.pk { text += " (Z_PK \(pk))" }
        return text
    }

    /// `text` safe on a terminal: control characters (an escape sequence or a line break in an app's data)
    /// shown as `\u{…}`.
    static func printable(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) else {
            return text
        }
        var result = ""
        for scalar in text.unicodeScalars {
            if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
                result += "\\u{" + String(scalar.value, radix: 16) + "}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// `14:03:27.412` in the local time zone, from the protocol's ISO 8601 UTC time.
    static func localTime(_ iso: String) -> String? {
        guard let unix = TimeArgument.iso8601(iso) else { return nil }
        var seconds = time_t(unix.rounded(.down))
        var parts = tm()
        guard localtime_r(&seconds, &parts) != nil else { return nil }
        let millis = Int((unix - unix.rounded(.down)) * 1_000)
        return pad(parts.tm_hour, 2) + ":" + pad(parts.tm_min, 2) + ":" + pad(parts.tm_sec, 2) + "."
            + pad(Int32(millis), 3)
    }

    static func pad(_ value: Int32, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }

    static func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
        let fill = String(repeating: " ", count: max(0, width - text.count))
        return right ? fill + text : text + fill
    }
}

/// Any JSON value, decoded to be shown again compactly (`{"title":"Buy milk","priority":2}`).
enum JSONValue: Decodable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        if let object = try? decoder.container(keyedBy: Key.self) {
            let keys = object.allKeys.sorted { $0.stringValue < $1.stringValue }
            self = .object(try keys.map { ($0.stringValue, try object.decode(JSONValue.self, forKey: $0)) })
            return
        }
        if var array = try? decoder.unkeyedContainer() {
            var items: [JSONValue] = []
            while !array.isAtEnd { items.append(try array.decode(JSONValue.self)) }
            self = .array(items)
            return
        }
        let single = try decoder.singleValueContainer()
        if single.decodeNil() {
            self = .null
        } else if let flag = try? single.decode(Bool.self) {
            self = .bool(flag)
        } else if let number = try? single.decode(Double.self) {
            self = .number(number)
        } else {
            self = .string(try single.decode(String.self))
        }
    }

    /// Compact text: keys unquoted, integers without a fraction.
    var compact: String {
        switch self {
        case .null: return "null"
        case .bool(let flag): return flag ? "true" : "false"
        case .number(let number):
            return number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
        case .string(let text): return "\"" + text + "\""
        case .array(let items): return "[" + items.map(\.compact).joined(separator: ",") + "]"
        case .object(let fields):
            return "{" + fields.map { "\($0.0): \($0.1.compact)" }.joined(separator: ", ") + "}"
        }
    }
}
