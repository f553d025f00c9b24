public import CoexistModel

/// The new relational schema derived from a model by documented conventions (see the README's "New
/// schema" section):
///
/// - one STRICT table per root entity, named in snake_case; a hierarchy shares its root's table, with a
///   `kind` column holding each row's concrete entity name, and every sub-entity gets a view of its rows;
/// - `id TEXT PRIMARY KEY`: the object's identity as a lower-case UUID: the UUID attribute `id` when the root
///   entity has one, else the configured identity attribute, else a generated UUID (recorded against the
///   legacy `Z_PK` in `coexist_identity` by the bridge);
/// - snake_case columns with exact encodings (``ValueEncoding``);
/// - a to-one as `<name>_id REFERENCES <table>(id) ON DELETE …` per the inverse's delete rule, deferred;
///   `<name>_position` beside it when the inverse is an ordered to-many;
/// - many-to-many (and to-many without inverse) as a join table with `source_id`, `target_id` and, for
///   ordered sides, `source_position` / `target_position`.
public struct NewSchema: Sendable {
    /// One table of the new schema.
    public struct Table: Sendable, Hashable {
        /// The table name.
        public var name: String
        /// The root entity, for entity tables; nil for join tables.
        public var rootEntity: String?
        /// Columns in declaration order (`id` first for entity tables).
        public var columns: [Column]
    }

    /// One column.
    public struct Column: Sendable, Hashable {
        /// The column name.
        public var name: String
        /// The STRICT type: INTEGER, REAL, TEXT or BLOB.
        public var type: String
        /// A CHECK expression, when the encoding has one.
        public var check: String?
        /// `REFERENCES table(id) ON DELETE action`, when a foreign key.
        public var references: (table: String, onDelete: String)?
        /// Whether the column is the primary key or part of it.
        public var isKey: Bool

        public static func == (lhs: Column, rhs: Column) -> Bool {
            lhs.name == rhs.name && lhs.type == rhs.type && lhs.check == rhs.check && lhs.isKey == rhs.isKey
                && lhs.references?.table == rhs.references?.table
                && lhs.references?.onDelete == rhs.references?.onDelete
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(name)
            hasher.combine(type)
        }
    }

    /// Where an object's identity comes from.
    public enum IdentitySource: Sendable, Hashable {
        /// A UUID attribute: its value is the identity (and it is stored only in `id`).
        case uuidAttribute(String)
        /// A String attribute holding a UUID: its value, lower-cased, is the identity.
        case textAttribute(String)
        /// No attribute: a UUID is generated on insert.
        case generated
    }

    /// How one property of an entity is stored.
    public enum PropertyMapping: Sendable, Hashable {
        /// An attribute in `column` of the entity's table.
        case column(String, ValueEncoding)
        /// The attribute that is the identity: stored in `id`.
        case identity(ValueEncoding)
        /// A to-one: the destination's id in `column`; `position` orders it within an ordered inverse.
        case toOne(column: String, position: String?)
        /// A to-many kept by the destination's to-one `inverse`.
        case inverse(String)
        /// A to-many in a join table; `selfColumn` holds this object's id, `otherColumn` the related one's,
        /// `position` this side's order when ordered.
        case join(table: String, selfColumn: String, otherColumn: String, position: String?)
    }

    /// The mapping of one entity.
    public struct EntityMapping: Sendable, Hashable {
        /// The entity name.
        public var entity: String
        /// Its table (the root's).
        public var table: String
        /// The `kind` value of its rows (its name), stored only in hierarchies.
        public var hasKindColumn: Bool
        /// The identity source (the root's).
        public var identity: IdentitySource
        /// Every stored property, inherited ones included, by name.
        public var properties: [String: PropertyMapping]
    }

    /// The model.
    public let model: Model
    /// Entity mappings by entity name.
    public let entities: [String: EntityMapping]
    /// Tables in creation order: entity tables, then join tables.
    public let tables: [Table]

    /// Derives the schema; throws ``SchemaError`` naming the entity and property for a name that is not a
    /// plain identifier, a collision, or an identity attribute of the wrong type.
    public init(model: Model, overrides: SchemaOverrides = SchemaOverrides()) throws(SchemaError) {
        var builder = SchemaBuilder(model: model, overrides: overrides)
        try builder.build()
        self.model = model
        entities = builder.entities
        tables = builder.tables
    }

    /// The table named `name`.
    public func table(named name: String) -> Table? { tables.first { $0.name == name } }
}
