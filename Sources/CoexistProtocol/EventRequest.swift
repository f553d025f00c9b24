import FoundationEssentials

/// One request on the socket: a JSON object with an `"op"` (see the README's "Event protocol"). The one
/// definition of the requests: the server decodes them (``decode(_:)``), clients build and encode them
/// (``init(_:id:since:name:entities:sides:authors:types:values:mirrors:framing:token:timeout:to:)``,
/// ``line``).
public struct EventRequest: Decodable, Sendable {
    /// Where a subscription starts.
    public enum Since: Sendable, Equatable, Decodable {
        /// After this token (0: from the beginning).
        case token(Int64)
        /// From the next commit on.
        case now
        /// The current rows first (read in one snapshot), then the changes after it.
        case snapshot

        public init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let token = try? container.decode(Int64.self), token >= 0 {
                self = .token(token)
            } else if let text = try? container.decode(String.self), text == "now" || text == "snapshot" {
                self = text == "now" ? .now : .snapshot
            } else {
                throw DecodingError.dataCorruptedError(
                    in: container,
                    debugDescription: "since is a token (a number ≥ 0), \"now\" or \"snapshot\""
                )
            }
        }
    }

    /// A request's id, echoed as `"id"` in its reply: a number or a string of at most 200 bytes.
    public enum RequestID: Sendable, Equatable, Decodable {
        case number(Int64)
        case text(String)

        public init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let number = try? container.decode(Int64.self) {
                self = .number(number)
            } else if let text = try? container.decode(String.self), text.utf8.count <= 200 {
                self = .text(text)
            } else {
                throw DecodingError.dataCorruptedError(
                    in: container,
                    debugDescription: "an id is an integer or a string of at most 200 bytes"
                )
            }
        }

        /// `line` (a JSON object) with `"id":…` first.
        public func tag(_ line: [UInt8]) -> [UInt8] {
            guard line.first == UInt8(ascii: "{") else { return line }
            var writer = JSONWriter()
            switch self {
            case .number(let number): writer.integer(number)
            case .text(let text): writer.string(text)
            }
            let rest = line.dropFirst()
            let separator: [UInt8] = rest.first == UInt8(ascii: "}") ? [] : [UInt8(ascii: ",")]
            return [UInt8(ascii: "{")] + Array(#""id":"#.utf8) + writer.bytes + separator + rest
        }
    }

    /// The request: `subscribe`, `unsubscribe`, `ack`, `wait`, `status`, `ping` or `migrate`.
    public var op: String
    /// Echoed in the reply (protocol 2).
    public var id: RequestID?
    /// `subscribe`: where to start (default: a named consumer's acknowledged token, else now).
    public var since: Since?
    /// `subscribe`: a durable consumer's name (its acknowledged token is kept in the database).
    public var name: String?
    /// `subscribe`: only these entities (and their sub-entities).
    public var entities: [String]?
    /// `subscribe`: only changes made on these sides (`legacy`, `new`).
    public var sides: [String]?
    /// `subscribe`: only transactions by these authors.
    public var authors: [String]?
    /// `subscribe`: only these change types (`insert`, `update`, `delete`).
    public var types: [String]?
    /// `subscribe`: include the objects' values in events.
    public var values: Bool?
    /// `subscribe`: include the bridge's own mirror transactions.
    public var mirrors: Bool?
    /// `subscribe`: `event` (one message per change, the default) or `transaction` (one per transaction).
    public var framing: String?
    /// `ack` and `wait`: the token.
    public var token: Int64?
    /// `wait`: milliseconds before a `timeout` error (default 10,000, at most 600,000).
    public var timeout: Int?
    /// `migrate`: the model version to reach (default: the configured `.xcdatamodeld`'s current one).
    public var to: String?

    enum CodingKeys: String, CodingKey {
        case op, id, since, name, entities, sides, authors, types, values, mirrors, framing, token, timeout, to
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        op = try container.decode(String.self, forKey: .op)
        id = try container.decodeIfPresent(RequestID.self, forKey: .id)
        since = try container.decodeIfPresent(Since.self, forKey: .since)
        name = try container.decodeIfPresent(String.self, forKey: .name)
        entities = try container.decodeIfPresent([String].self, forKey: .entities)
        sides = try container.decodeIfPresent([String].self, forKey: .sides)
        authors = try container.decodeIfPresent([String].self, forKey: .authors)
        types = try container.decodeIfPresent([String].self, forKey: .types)
        values = try container.decodeIfPresent(Bool.self, forKey: .values)
        mirrors = try container.decodeIfPresent(Bool.self, forKey: .mirrors)
        framing = try container.decodeIfPresent(String.self, forKey: .framing)
        token = try Self.integer(container, .token)
        timeout = try Self.integer(container, .timeout).map { Int($0) }
        to = try container.decodeIfPresent(String.self, forKey: .to)
    }

    /// An integer field; a number beyond Int64 is out of range (an `invalid_request` naming the field),
    /// never rounded or wrapped.
    private static func integer(_ container: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys) throws -> Int64? {
        guard container.contains(key), try !container.decodeNil(forKey: key) else { return nil }
        if let value = try? container.decode(Int64.self, forKey: key) { return value }
        if (try? container.decode(Double.self, forKey: key)) != nil {
            throw DecodingError.dataCorruptedError(
                forKey: key,
                in: container,
                debugDescription: "an integer from \(Int64.min) to \(Int64.max)"
            )
        }
        return try container.decode(Int64.self, forKey: key)
    }

    /// A request to send: `op` and the fields it takes (nil fields are left out).
    public init(
        _ op: String,
        id: RequestID? = nil,
        since: Since? = nil,
        name: String? = nil,
        entities: [String]? = nil,
        sides: [String]? = nil,
        authors: [String]? = nil,
        types: [String]? = nil,
        values: Bool? = nil,
        mirrors: Bool? = nil,
        framing: String? = nil,
        token: Int64? = nil,
        timeout: Int? = nil,
        to: String? = nil
    ) {
        self.op = op
        self.id = id
        self.since = since
        self.name = name
        self.entities = entities
        self.sides = sides
        self.authors = authors
        self.types = types
        self.values = values
        self.mirrors = mirrors
        self.framing = framing
        self.token = token
        self.timeout = timeout
        self.to = to
    }

    /// The request as one wire line (with its newline), fields in a fixed order, nil ones left out.
    public var line: [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("op")
        writer.string(op)
        switch id {
        case .number(let number)?:
            writer.key("id")
            writer.integer(number)
        case .text(let text)?:
            writer.key("id")
            writer.string(text)
        case nil: break
        }
        switch since {
        case .token(let token)?:
            writer.key("since")
            writer.integer(token)
        case .now?:
            writer.key("since")
            writer.string("now")
        case .snapshot?:
            writer.key("since")
            writer.string("snapshot")
        case nil: break
        }
        if let name {
            writer.key("name")
            writer.string(name)
        }
        for (key, list) in [("entities", entities), ("sides", sides), ("authors", authors), ("types", types)] {
            guard let list else { continue }
            writer.key(named: key)
            writer.beginArray()
            for item in list { writer.string(item) }
            writer.endArray()
        }
        for (key, flag) in [("values", values), ("mirrors", mirrors)] {
            guard let flag else { continue }
            writer.key(named: key)
            writer.bool(flag)
        }
        if let framing {
            writer.key("framing")
            writer.string(framing)
        }
        if let token {
            writer.key("token")
            writer.integer(token)
        }
        if let timeout {
            writer.key("timeout")
            writer.integer(Int64(timeout))
        }
        if let to {
            writer.key("to")
            writer.string(to)
        }
        writer.endObject()
        return writer.line
    }

    /// The request as text without its newline (for line clients that add it).
    public var text: String { String(decoding: line.dropLast(), as: UTF8.self) }

    /// The id of a request line that does not decode as a request (a field of the wrong type, no `op`), when
    /// the line is a JSON object whose `id` is one: so that the error names the request it answers.
    public static func salvagedID(_ line: [UInt8]) -> RequestID? {
        struct IDOnly: Decodable { var id: RequestID? }
        return (try? JSONDecoder().decode(IDOnly.self, from: Data(line)))?.id
    }

    /// Decodes one request line; the error says what is wrong, for the client.
    public static func decode(_ line: [UInt8]) -> Result<EventRequest, EventError> {
        guard String(validating: line, as: UTF8.self) != nil else {
            return .failure(EventError(code: .invalidUTF8, message: "requests are UTF-8 JSON"))
        }
        do {
            return .success(try JSONDecoder().decode(EventRequest.self, from: Data(line)))
        } catch DecodingError.keyNotFound(let key, _) {
            return .failure(EventError(code: .invalidRequest, message: "missing \"\(key.stringValue)\""))
        } catch DecodingError.typeMismatch(_, let context), DecodingError.dataCorrupted(let context) {
            let field = context.codingPath.map(\.stringValue).joined(separator: ".")
            if field.isEmpty {
                return .failure(EventError(code: .invalidJSON, message: "a request is one JSON object with an \"op\""))
            }
            return .failure(EventError(code: .invalidRequest, message: "\(field): \(context.debugDescription)"))
        } catch {
            return .failure(EventError(code: .invalidJSON, message: "a request is one JSON object with an \"op\""))
        }
    }
}

/// An error sent to a client: a stable code and a message.
public struct EventError: Error, Sendable, Equatable {
    /// Stable error codes of the protocol.
    public enum Code: String, Sendable {
        case invalidUTF8 = "invalid_utf8"
        case invalidJSON = "invalid_json"
        case invalidRequest = "invalid_request"
        case unknownOp = "unknown_op"
        case lineTooLong = "line_too_long"
        case tokenExpired = "token_expired"
        case forbidden
        case tooManyClients = "too_many_clients"
        case timeout
        case requestTimeout = "request_timeout"
        case notSubscribed = "not_subscribed"
        case alreadySubscribed = "already_subscribed"
        case unknownEntity = "unknown_entity"
        case overBudget = "over_budget"
        case tooManyConsumers = "too_many_consumers"
        case snapshotUnavailable = "snapshot_unavailable"
        case internalError = "internal"
    }

    /// What went wrong, stable across versions.
    public var code: Code
    /// A human-readable explanation.
    public var message: String
    /// For `token_expired`: the oldest token still available.
    public var oldest: Int64?

    public init(code: Code, message: String, oldest: Int64? = nil) {
        self.code = code
        self.message = message
        self.oldest = oldest
    }

    /// The wire line.
    public var line: [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("type")
        writer.string("error")
        writer.key("code")
        writer.string(code.rawValue)
        writer.key("message")
        writer.string(message)
        if let oldest {
            writer.key("oldest")
            writer.integer(oldest)
        }
        writer.endObject()
        return writer.line
    }
}
