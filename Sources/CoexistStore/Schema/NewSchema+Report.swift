/// The mapping printed by `coexistctl schema`: entity ↔ table, property ↔ column, encoding.
public struct SchemaReport: Sendable, Encodable {
    /// One entity.
    public struct EntityReport: Sendable, Encodable {
        public var entity: String
        public var table: String
        public var parent: String?
        public var identity: String
        public var properties: [PropertyReport]
    }

    /// One property.
    public struct PropertyReport: Sendable, Encodable {
        public var name: String
        public var storage: String
        public var column: String?
        public var encoding: String?
        public var type: String?
    }

    /// Every entity, by name.
    public var entities: [EntityReport]
    /// The DDL the schema is created with.
    public var statements: [String]

    /// The report of `schema`.
    public init(_ schema: NewSchema) {
        entities = schema.model.entities.compactMap { entity in
            guard let mapping = schema.entities[entity.name] else { return nil }
            let identity: String =
                switch mapping.identity {
                case .uuidAttribute(let name): "attribute \(name) (UUID)"
                case .textAttribute(let name): "attribute \(name) (text, lower-cased)"
                case .generated: "generated UUID"
                }
            let properties = mapping.properties.sorted { $0.key < $1.key }.map { name, storage -> PropertyReport in
                switch storage {
                case .column(let column, let encoding):
                    PropertyReport(
                        name: name,
                        storage: "column",
                        column: column,
                        encoding: encoding.rawValue,
                        type: encoding.sqlType
                    )
                case .identity(let encoding):
                    PropertyReport(
                        name: name,
                        storage: "identity",
                        column: "id",
                        encoding: encoding.rawValue,
                        type: "TEXT"
                    )
                case .toOne(let column, let position):
                    PropertyReport(
                        name: name,
                        storage: position.map { "to-one, ordered by \($0)" } ?? "to-one",
                        column: column,
                        encoding: nil,
                        type: "TEXT"
                    )
                case .inverse(let inverse):
                    PropertyReport(
                        name: name,
                        storage: "to-many through \(inverse)",
                        column: nil,
                        encoding: nil,
                        type: nil
                    )
                case .join(let table, let selfColumn, let otherColumn, let position):
                    PropertyReport(
                        name: name,
                        storage:
                            "join table \(table) (\(selfColumn) → \(otherColumn)\(position.map { ", ordered by \($0)" } ?? ""))",
                        column: nil,
                        encoding: nil,
                        type: nil
                    )
                }
            }
            return EntityReport(
                entity: entity.name,
                table: mapping.table,
                parent: entity.superentity,
                identity: identity,
                properties: properties
            )
        }
        statements = schema.createStatements()
    }

    /// Aligned text: one block per entity.
    public var text: String {
        var lines: [String] = []
        for entity in entities {
            let parent = entity.parent.map { " : \($0)" } ?? ""
            lines.append("\(entity.entity)\(parent) → table \(entity.table), identity \(entity.identity)")
            let width = entity.properties.map(\.name.count).max() ?? 0
            for property in entity.properties {
                var line = "  " + property.name + String(repeating: " ", count: width - property.name.count) + "  "
                if let column = property.column { line += "→ \(column)  " }
                line += property.storage
                if let encoding = property.encoding, let type = property.type { line += "  \(encoding) (\(type))" }
                lines.append(line)
            }
        }
        return lines.joined(separator: "\n")
    }
}
