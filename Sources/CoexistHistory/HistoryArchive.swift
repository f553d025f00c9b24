public import CoexistModel
public import CoexistSQLite
public import FoundationEssentials

/// The history as NDJSON, one transaction per line, and back (`coexistctl history export` and `import`).
///
/// A line holds the transaction (token, time as seconds since 2001 and as ISO-8601, author, bundle,
/// context, process, side) and its changes in order, each with what a reader wants (entity, object, type,
/// changed properties, tombstone values by name) and what an import needs to write the same rows again:
/// a legacy change's raw `ZCOLUMNS` (base64) and `ZTOMBSTONEn` values (typed), a new-side change's stored
/// property and tombstone texts. Keys are sorted, so the same history always gives the same bytes: export,
/// import into a fresh store of the same model, export again, and the two files are identical.
public enum HistoryArchive {
    /// One transaction of the archive.
    public struct Transaction: Codable, Sendable, Equatable {
        public var token: Int64
        /// Seconds since 2001, exactly as stored.
        public var time: Double
        /// The same, ISO-8601 (for people; an import reads `time`).
        public var timestamp: String
        public var author: String?
        public var bundleID: String?
        public var contextName: String?
        public var processName: String?
        public var side: Side
        public var changes: [Change]
    }

    /// One change of an archived transaction.
    public struct Change: Codable, Sendable, Equatable {
        public var side: Side
        /// `insert`, `update` or `delete`.
        public var type: String
        public var entity: String?
        /// Legacy: the entity number and `Z_PK`.
        public var entityNumber: Int?
        public var pk: Int64?
        /// New side: the object's identity.
        public var id: String?
        /// Updates: the changed properties (nil when a legacy bitmap does not decode).
        public var properties: [String]?
        /// Deletes: the preserved values by name, as JSON values (for reading; an import uses the raw ones).
        public var tombstone: [String: Scalar]
        /// Legacy: `ZCOLUMNS` in base64, and the `ZTOMBSTONEn` values in column order.
        public var columns: String?
        public var tombstoneColumns: [Value]?
        /// New side: the stored texts of `coexist_change.properties`, `.tombstone` and `.vals` (the last
        /// absent from archives of files that did not record values).
        public var storedProperties: String?
        public var storedTombstone: String?
        public var storedValues: String?
    }

    /// A JSON scalar as read back: what ``JSONAttributeValue`` writes (numbers, text, booleans, null).
    public enum Scalar: Codable, Sendable, Equatable {
        case null
        case integer(Int64)
        case number(Double)
        case bool(Bool)
        case text(String)

        /// The JSON form of an attribute value (dates ISO-8601, UUIDs as text, bytes as base64).
        public init(_ value: AttributeValue) {
            switch value {
            case .null: self = .null
            case .integer(let number): self = .integer(number)
            case .boolean(let flag): self = .bool(flag)
            case .double(let number): self = number.isFinite ? .number(number) : .text(String(number))
            case .decimal(let text), .string(let text), .uri(let text): self = .text(text)
            case .date(let seconds): self = .text(ReferenceDate.iso8601(secondsSince2001: seconds))
            case .uuid: self = .text(value.uuidString ?? "")
            case .binary(let bytes), .transformable(let bytes), .externalReference(let bytes):
                self = .text(Base64.encode(bytes))
            }
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() {
                self = .null
            } else if let flag = try? container.decode(Bool.self) {
                self = .bool(flag)
            } else if let number = try? container.decode(Int64.self) {
                self = .integer(number)
            } else if let number = try? container.decode(Double.self) {
                self = .number(number)
            } else {
                self = .text(try container.decode(String.self))
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .null: try container.encodeNil()
            case .integer(let number): try container.encode(number)
            case .number(let number): try container.encode(number)
            case .bool(let flag): try container.encode(flag)
            case .text(let text): try container.encode(text)
            }
        }
    }

    /// A raw SQLite value, typed: `{"integer":1}`, `{"real":1.5}`, `{"text":"a"}`, `{"blob":"base64"}` or
    /// `null`. A delete's trailing nulls (the `ZTOMBSTONEn` columns it did not use) are left out.
    public enum Value: Codable, Sendable, Equatable {
        case null
        case integer(Int64)
        case real(Double)
        case text(String)
        case blob(String)

        init(_ value: SQLiteValue) {
            switch value {
            case .null: self = .null
            case .integer(let number): self = .integer(number)
            case .real(let number): self = .real(number)
            case .text(let text): self = .text(text)
            case .blob(let bytes): self = .blob(Base64.encode(bytes))
            }
        }

        enum CodingKeys: String, CodingKey { case integer, real, text, blob }

        public init(from decoder: any Decoder) throws {
            if try decoder.singleValueContainer().decodeNil() {
                self = .null
                return
            }
            let container = try decoder.container(keyedBy: CodingKeys.self)
            if let number = try container.decodeIfPresent(Int64.self, forKey: .integer) {
                self = .integer(number)
            } else if let number = try container.decodeIfPresent(Double.self, forKey: .real) {
                self = .real(number)
            } else if let text = try container.decodeIfPresent(String.self, forKey: .text) {
                self = .text(text)
            } else if let text = try container.decodeIfPresent(String.self, forKey: .blob) {
                self = .blob(text)
            } else {
                throw DecodingError.dataCorrupted(
                    DecodingError.Context(codingPath: decoder.codingPath, debugDescription: "not a typed SQLite value")
                )
            }
        }

        public func encode(to encoder: any Encoder) throws {
            if case .null = self {
                var container = encoder.singleValueContainer()
                try container.encodeNil()
                return
            }
            var container = encoder.container(keyedBy: CodingKeys.self)
            switch self {
            case .null: break
            case .integer(let number): try container.encode(number, forKey: .integer)
            case .real(let number): try container.encode(number, forKey: .real)
            case .text(let text): try container.encode(text, forKey: .text)
            case .blob(let text): try container.encode(text, forKey: .blob)
            }
        }

        var sqlite: SQLiteValue? {
            switch self {
            case .null: .null
            case .integer(let number): .integer(number)
            case .real(let number): .real(number)
            case .text(let text): .text(text)
            case .blob(let text): Base64.decode(text).map { .blob($0) }
            }
        }
    }

    /// The encoder of archive lines: sorted keys, non-finite numbers as strings.
    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "Infinity",
            negativeInfinity: "-Infinity",
            nan: "NaN"
        )
        return encoder
    }

    /// The decoder of archive lines.
    public static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: "Infinity",
            negativeInfinity: "-Infinity",
            nan: "NaN"
        )
        return decoder
    }

    /// Archives `transactions` (read by `reader` from `connection`), with the raw columns of their changes.
    public static func archive(_ transactions: [HistoryTransaction], connection: Connection) throws -> [Transaction] {
        guard let first = transactions.first?.token, let last = transactions.last?.token else { return [] }
        let tombstones = try HistoryTables.tombstoneColumns(connection)
        var rawTombstones: [Int64: [Value]] = [:]
        if !tombstones.isEmpty {
            let list = tombstones.map(SQLIdentifier.quoted).joined(separator: ", ")
            try connection.forEachRow(
                "SELECT Z_PK, \(list) FROM ACHANGE WHERE ZTRANSACTIONID BETWEEN ? AND ? AND ZCHANGETYPE = 2",
                [.integer(first), .integer(last)]
            ) { row in
                // Trailing nulls are the columns this delete did not use: left out, so that the same history
                // exports the same whatever number of ZTOMBSTONEn columns its store has grown.
                var values = tombstones.indices.map { Value(row[1 + $0]) }
                while values.last == .null { values.removeLast() }
                rawTombstones[row[0].integerValue ?? 0] = values
            }
        }
        var stored: [Int64: (String?, String?, String?)] = [:]
        if try connection.tableExists("coexist_change") {
            let values = try CompanionChanges.recordsValues(connection) ? "vals" : "NULL"
            try connection.forEachRow(
                "SELECT id, properties, tombstone, \(values) FROM coexist_change WHERE token BETWEEN ? AND ?",
                [.integer(first), .integer(last)]
            ) { row in stored[row[0].integerValue ?? 0] = (row[1].textValue, row[2].textValue, row[3].textValue) }
        }
        return transactions.map { transaction in
            Transaction(
                token: transaction.token,
                time: transaction.timestamp,
                timestamp: ReferenceDate.iso8601(secondsSince2001: transaction.timestamp),
                author: transaction.author,
                bundleID: transaction.bundleID,
                contextName: transaction.contextName,
                processName: transaction.processName,
                side: transaction.side,
                changes: transaction.changes.map { change in
                    let legacy = change.side == .legacy
                    return Change(
                        side: change.side,
                        type: change.type.description,
                        entity: change.entity,
                        entityNumber: change.entityNumber,
                        pk: change.objectPK,
                        id: change.objectID,
                        properties: change.type == .update ? change.properties : nil,
                        tombstone: change.tombstone.mapValues(Scalar.init),
                        columns: legacy ? change.columns.map(Base64.encode) : nil,
                        tombstoneColumns: legacy && change.type == .delete ? rawTombstones[change.changeID] : nil,
                        storedProperties: legacy ? nil : stored[change.changeID]?.0,
                        storedTombstone: legacy ? nil : stored[change.changeID]?.1,
                        storedValues: legacy ? nil : stored[change.changeID]?.2
                    )
                }
            )
        }
    }

    /// Why a line could not be imported: the file, the line number and the reason.
    public struct ImportError: Error, Sendable, CustomStringConvertible {
        public var file: String?
        public var line: Int
        public var reason: String
        public var description: String { "\(file ?? "input"):\(line): \(reason)" }

        /// Creates the error.
        public init(file: String? = nil, line: Int, reason: String) {
            self.file = file
            self.line = line
            self.reason = reason
        }
    }

    /// Writes archived transactions into the history of `connection`'s store, keeping their tokens, inside
    /// the caller's write transaction. `entityNumbers` maps entity names to the store's `Z_ENT`; a legacy
    /// change of an entity the store does not have keeps its number. Every token must come after the
    /// store's last; `line` numbers the input for errors.
    public struct Importer {
        let connection: Connection
        let keys: KeyAllocator
        let writer: TransactionWriter
        let entityNumbers: [String: Int]
        var tombstoneCount: Int

        /// An importer into `connection`'s store (history tables created when absent).
        public init(connection: Connection, entityNumbers: [String: Int]) throws {
            self.connection = connection
            keys = KeyAllocator(connection: connection)
            writer = TransactionWriter(connection: connection, keys: keys)
            self.entityNumbers = entityNumbers
            tombstoneCount = try HistoryTables.ensure(connection, tombstones: 0)
        }

        /// Imports one transaction.
        public mutating func write(_ transaction: Transaction, line: Int) throws {
            do {
                try keys.take(transaction.token, entity: TransactionWriter.transactionEntity, table: "ATRANSACTION")
            } catch {
                throw ImportError(line: line, reason: "token \(transaction.token): \(error)")
            }
            try connection.run(
                """
                INSERT INTO ATRANSACTION (Z_PK, Z_ENT, Z_OPT, ZAUTHORTS, ZBUNDLEIDTS, ZCONTEXTNAMETS, ZPROCESSIDTS, ZTIMESTAMP)
                VALUES (?, \(TransactionWriter.transactionEntity), NULL, ?, ?, ?, ?, ?)
                """,
                [
                    .integer(transaction.token), try writer.intern(transaction.author),
                    try writer.intern(transaction.bundleID), try writer.intern(transaction.contextName),
                    try writer.intern(transaction.processName), .real(transaction.time),
                ]
            )
            for change in transaction.changes {
                guard let type = ChangeType.allCases.first(where: { $0.description == change.type }) else {
                    throw ImportError(line: line, reason: "change type \"\(change.type)\"")
                }
                switch change.side {
                case .legacy: try writeLegacy(change, type: type, token: transaction.token, line: line)
                case .new: try writeNew(change, type: type, token: transaction.token, line: line)
                }
            }
        }

        /// At most this many `ZTOMBSTONEn` values in one change (a model has as many as its attributes
        /// preserved after deletion; an import never grows `ACHANGE` past this).
        public static let maximumTombstones = 128

        /// Writes the new `Z_MAX` values; call before the transaction commits.
        public func finish() throws { try keys.flush() }

        private mutating func writeLegacy(_ change: Change, type: ChangeType, token: Int64, line: Int) throws {
            guard let entity = change.entity else {
                throw ImportError(
                    line: line,
                    reason:
                        "a change of entity number \(change.entityNumber.map(String.init) ?? "?") that the exporting store's model did not name: it cannot be mapped"
                )
            }
            guard let number = entityNumbers[entity] else {
                throw ImportError(
                    line: line,
                    reason: "entity \(entity) is not in the store imported into (another model?)"
                )
            }
            guard let pk = change.pk else { throw ImportError(line: line, reason: "a legacy change without pk") }
            let columns = try change.columns.map { text -> [UInt8] in
                guard let bytes = Base64.decode(text) else {
                    throw ImportError(line: line, reason: "columns are not base64")
                }
                return bytes
            }
            let tombstones = try (change.tombstoneColumns ?? []).map { value -> SQLiteValue in
                guard let raw = value.sqlite else {
                    throw ImportError(line: line, reason: "a tombstone blob is not base64")
                }
                return raw
            }
            guard tombstones.count <= Self.maximumTombstones else {
                throw ImportError(
                    line: line,
                    reason: "\(tombstones.count) tombstone values (at most \(Self.maximumTombstones))"
                )
            }
            if tombstones.count > tombstoneCount {
                tombstoneCount = try HistoryTables.ensure(connection, tombstones: tombstones.count)
            }
            let key = try keys.allocate(entity: TransactionWriter.changeEntity, table: "ACHANGE")
            let names = tombstones.indices.map { ", ZTOMBSTONE\($0)" }.joined()
            try connection.run(
                """
                INSERT INTO ACHANGE (Z_PK, Z_ENT, Z_OPT, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZTRANSACTIONID, ZCOLUMNS\(names))
                VALUES (?, \(TransactionWriter.changeEntity), NULL, ?, ?, ?, ?, ?\(tombstones.map { _ in ", ?" }.joined()))
                """,
                [
                    .integer(key), .integer(Int64(type.rawValue)), .integer(Int64(number)), .integer(pk),
                    .integer(token), columns.map { .blob($0) } ?? .null,
                ] + tombstones
            )
        }

        private func writeNew(_ change: Change, type: ChangeType, token: Int64, line: Int) throws {
            guard let entity = change.entity, let id = change.id else {
                throw ImportError(line: line, reason: "a new-side change without entity or id")
            }
            try CompanionChanges.ensure(connection)
            try connection.run(
                """
                INSERT INTO coexist_change (token, type, entity, object_id, properties, tombstone, vals)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """,
                [
                    .integer(token), .integer(Int64(type.rawValue)), .text(entity), .text(id),
                    change.storedProperties.map { .text($0) } ?? .null,
                    change.storedTombstone.map { .text($0) } ?? .null,
                    change.storedValues.map { .text($0) } ?? .null,
                ]
            )
        }
    }
}
