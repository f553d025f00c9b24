/// The subject template of published changes: `.`-separated tokens where `{store}`, `{entity}`, `{change}`
/// and `{side}` stand for the change's values (`coexist.{store}.{entity}.{change}`).
public struct SubjectTemplate: Sendable, Equatable {
    /// The template as configured.
    public let template: String
    private let tokens: [String]
    /// The template cut once into text and placeholders, for ``subject(store:entity:change:side:)``.
    private let pieces: [Piece]

    private enum Piece: Sendable, Equatable {
        case text(String)
        case store, entity, change, side
    }

    /// A template (checked by the configuration: tokens of letters, digits, `-`, `_` and placeholders).
    public init(_ template: String) {
        self.template = template
        tokens = template.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var pieces: [Piece] = []
        func text(_ value: some StringProtocol) {
            guard !value.isEmpty else { return }
            if case .text(let before)? = pieces.last {
                pieces[pieces.count - 1] = .text(before + value)
            } else {
                pieces.append(.text(String(value)))
            }
        }
        for (index, token) in tokens.enumerated() {
            if index > 0 { text(".") }
            var rest = Substring(token)
            while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
                text(rest[..<open])
                switch rest[rest.index(after: open)..<close] {
                case "store": pieces.append(.store)
                case "entity": pieces.append(.entity)
                case "change": pieces.append(.change)
                case "side": pieces.append(.side)
                default: text("_")
                }
                rest = rest[rest.index(after: close)...]
            }
            text(rest)
        }
        self.pieces = pieces
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
        var result = ""
        result.reserveCapacity(template.utf8.count + store.utf8.count + (entity?.utf8.count ?? 1) + 16)
        for piece in pieces {
            switch piece {
            case .text(let text): result += text
            case .store: result += Self.token(store)
            case .entity: result += Self.token(entity ?? "_")
            case .change: result += Self.token(change)
            case .side: result += Self.token(side)
            }
        }
        return result
    }

    /// `value` as a subject token: never empty, never a wildcard or a separator.
    static func token(_ value: String) -> String {
        // Names are nearly always tokens already: then the value itself, not a copy.
        if !value.isEmpty, value.utf8.withContiguousStorageIfAvailable({ $0.allSatisfy(isNameByte) }) ?? false {
            return value
        }
        let bytes = value.utf8.map { isNameByte($0) ? $0 : UInt8(ascii: "_") }
        return bytes.isEmpty ? "_" : String(decoding: bytes, as: UTF8.self)
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
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

    /// A message about the change `index` of transaction `token` (nil: the whole transaction) in `store`;
    /// `data` is the payload as it is sent (an event line without its newline: `WireLine.payload`).
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
        self.data = data
        self.token = token
        messageID = index.map { "\(store):\(token):\($0)" } ?? "\(store):\(token)"
        var headers = [
            ("Coexist-Token", String(token)), ("Coexist-Store", store), ("Coexist-Entity", entity ?? ""),
            ("Coexist-Change", change), ("Coexist-Side", side),
        ]
        if let author { headers.append(("Coexist-Author", Self.headerValue(author))) }
        self.headers = headers
    }

    /// `value` without control characters (a header line ends at CR or LF), at most 256 bytes.
    static func headerValue(_ value: String) -> String {
        // Nearly always printable ASCII within the limit: the value itself.
        if value.utf8.count <= 256,
            value.utf8.withContiguousStorageIfAvailable({ $0.allSatisfy { $0 >= 0x20 && $0 < 0x7F } }) ?? false
        {
            return value
        }
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
