/// The subject template of published changes: `.`-separated tokens where `{store}`, `{entity}`, `{change}`
/// and `{side}` stand for the change's values (`coexist.{store}.{entity}.{change}`).
public struct SubjectTemplate: Sendable, Equatable {
    /// The template as configured.
    public let template: String
    private let tokens: [String]

    /// A template (checked by the configuration: tokens of letters, digits, `-`, `_` and placeholders).
    public init(_ template: String) {
        self.template = template
        tokens = template.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    }

    /// The subjects the stream takes: each token holding a placeholder becomes the wildcard `*`.
    public var filter: String {
        tokens.map { $0.contains("{") ? "*" : $0 }.joined(separator: ".")
    }

    /// The subjects of the messages of store `store`: the `{store}` token replaced by its value, every other
    /// token holding a placeholder by `*`.
    public func filter(store: String) -> String {
        tokens.map { $0 == "{store}" ? Self.token(store) : $0.contains("{") ? "*" : $0 }.joined(separator: ".")
    }

    /// The subject of a message about `entity` (nil: `_`), `change` and `side` in store `store`. Values are
    /// reduced to what a subject token may hold (letters, digits, `-`, `_`; anything else becomes `_`).
    public func subject(store: String, entity: String?, change: String, side: String) -> String {
        let values = [
            "store": Self.token(store), "entity": Self.token(entity ?? "_"), "change": Self.token(change),
            "side": Self.token(side),
        ]
        return tokens.map { token in
            var result = ""
            var rest = Substring(token)
            while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
                result += rest[..<open]
                result += values[String(rest[rest.index(after: open)..<close])] ?? "_"
                rest = rest[rest.index(after: close)...]
            }
            return result + rest
        }.joined(separator: ".")
    }

    /// `value` as a subject token: never empty, never a wildcard or a separator.
    static func token(_ value: String) -> String {
        let bytes = value.utf8.map { byte -> UInt8 in
            let isName =
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            return isName ? byte : UInt8(ascii: "_")
        }
        return bytes.isEmpty ? "_" : String(decoding: bytes, as: UTF8.self)
    }
}

/// One message to publish: subject, payload (the socket protocol's JSON line without its newline), the id
/// the server's duplicate window knows it by, and its headers.
public struct ChangeMessage: Sendable, Equatable {
    public var subject: String
    public var data: [UInt8]
    /// `STORE:TOKEN:INDEX` for one change, `STORE:TOKEN` for a transaction: the same change always has the
    /// same id, so a copy published again (after a crash or an outage) is dropped by the server.
    public var messageID: String
    public var headers: [(String, String)]
    /// The transaction's token.
    public var token: Int64

    /// A message about the change `index` of transaction `token` (nil: the whole transaction) in `store`.
    public init(
        subject: String,
        data: [UInt8],
        store: String,
        token: Int64,
        index: Int?,
        entity: String?,
        change: String,
        side: String,
        author: String?
    ) {
        self.subject = subject
        self.data = data.last == UInt8(ascii: "\n") ? Array(data.dropLast()) : data
        self.token = token
        messageID = index.map { "\(store):\(token):\($0)" } ?? "\(store):\(token)"
        var headers = [
            ("Coexist-Token", "\(token)"), ("Coexist-Store", store), ("Coexist-Entity", entity ?? ""),
            ("Coexist-Change", change), ("Coexist-Side", side),
        ]
        if let author { headers.append(("Coexist-Author", Self.headerValue(author))) }
        self.headers = headers
    }

    /// `value` without control characters (a header line ends at CR or LF), at most 256 bytes.
    static func headerValue(_ value: String) -> String {
        var result = ""
        for scalar in value.unicodeScalars where scalar.value >= 0x20 && scalar.value != 0x7F {
            guard result.utf8.count + String(scalar).utf8.count <= 256 else { break }
            result.unicodeScalars.append(scalar)
        }
        return result
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.subject == rhs.subject && lhs.data == rhs.data && lhs.messageID == rhs.messageID
            && lhs.headers.map(\.0) == rhs.headers.map(\.0) && lhs.headers.map(\.1) == rhs.headers.map(\.1)
            && lhs.token == rhs.token
    }
}
