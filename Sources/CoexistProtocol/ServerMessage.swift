import FoundationEssentials

/// A message from coexistd as clients read it: its `type` and the fields replies and events carry; every
/// other field is ignored (protocol 2: unknown fields never break a reader).
public struct ServerMessage: Decodable, Sendable {
    /// `event`, `transaction`, `subscribed`, `end_of_backlog`, `waited`, `acked`, `pong`, `error`, `lagged`, …
    public var type: String
    /// A reply's request id; an event's object identity (text).
    public var id: EventRequest.RequestID?
    /// The token the message is about.
    public var token: Int64?
    /// An event's place in its transaction, and the transaction's number of changes.
    public var index: Int?
    public var count: Int?
    /// An error's code and explanation.
    public var code: String?
    public var message: String?
    /// The bridge's cursor (`waited`, a `timeout` error).
    public var cursor: Int64?
    /// An event's side, transaction author, entity, legacy key, change type, changed properties, and whether
    /// the bridge wrote it.
    public var side: String?
    public var author: String?
    public var entity: String?
    public var pk: Int64?
    public var change: String?
    public var properties: [String]?
    public var mirror: Bool?
    /// The protocol version (`subscribed`, `pong`).
    public var protocolVersion: Int?
    /// A `status` reply's phase: `serving`; while coexistd starts, `starting`, then `initial-sync`.
    public var phase: String?

    enum CodingKeys: String, CodingKey {
        case type, id, token, index, count, code, message, cursor, side, author, entity, pk, change, properties
        case mirror, phase
        case protocolVersion = "protocol"
    }

    /// The message on `line`, nil when it is not a JSON object with a `type`.
    public static func decode(_ line: String) -> ServerMessage? {
        try? JSONDecoder().decode(ServerMessage.self, from: Data(line.utf8))
    }

    /// An event's object identity (text ids only).
    public var objectID: String? {
        if case .text(let text)? = id { return text }
        return nil
    }
}
