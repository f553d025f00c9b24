import CoexistHistory
public import CoexistModel
public import CoexistSQLite
import FoundationEssentials

/// The new schema inside the shared SQLite file: its tables, next to Core Data's, and saves to them.
///
/// Opening never touches Core Data's tables. ``createSchema()`` creates the new tables (in one
/// transaction) when they are absent and checks them when present.
public final class NewStore {
    /// The database file.
    public let path: String
    /// The connection; confined, like the store, to one task.
    public let connection: Connection
    /// The schema derived from the model.
    public let schema: NewSchema
    /// `INSERT` statements by entity name (the schema never changes under a store).
    var insertStatements: [String: String] = [:]
    /// What a row of each entity decodes (``ReadPlan``), by entity name, worked out on first use.
    var readPlans: [String: ReadPlan] = [:]
    /// How a save reads back the values it records, by entity name (``NewSave/recordedValues(_:)``).
    var recordingLayouts: [String: RecordingLayout] = [:]
    /// The model.
    public var model: Model { schema.model }

    /// Opens the database at `path` (read-write by default) with the schema of `model`.
    public convenience init(
        path: String,
        model: Model,
        overrides: SchemaOverrides = SchemaOverrides(),
        options: OpenOptions = OpenOptions()
    ) throws(StoreError) {
        let connection: Connection
        do {
            connection = try Connection(path: path, options: options)
        } catch {
            throw .sqlite(error)
        }
        try self.init(connection: connection, model: model, overrides: overrides)
    }

    /// The new store on an existing connection, shared with its other users (the bridge's legacy store).
    public init(connection: Connection, model: Model, overrides: SchemaOverrides = SchemaOverrides()) throws(StoreError)
    {
        path = connection.path
        self.connection = connection
        do {
            schema = try NewSchema(model: model, overrides: overrides)
        } catch {
            throw .schema(error)
        }
    }

    /// The new store on an existing connection with a schema already derived (another store's): a second
    /// view of one file, such as a reader's own snapshot.
    public init(connection: Connection, schema: NewSchema) {
        path = connection.path
        self.connection = connection
        self.schema = schema
    }

    /// The model version identifiers the file's new schema is at (`coexist_schema_version`); nil when the
    /// file does not record one (no new schema yet, or one made before versions were recorded).
    public func storedVersion() throws(StoreError) -> [String]? {
        do {
            guard try connection.tableExists("coexist_schema_version") else { return nil }
            guard
                let text = try connection.scalar("SELECT identifiers FROM coexist_schema_version WHERE id = 1")
                    .textValue
            else { return nil }
            return try JSONDecoder().decode([String].self, from: Data(text.utf8))
        } catch let error as SQLiteError {
            throw .sqlite(error)
        } catch {
            throw .invalidData(path: path, detail: "coexist_schema_version: \(error)")
        }
    }

    /// Whether the schema's tables exist.
    public func schemaExists() throws(StoreError) -> Bool {
        do {
            for table in schema.tables where try !connection.tableExists(table.name) { return false }
            return true
        } catch {
            throw .sqlite(error)
        }
    }

    /// Creates the new schema when absent; when present, checks that every table has the columns the model
    /// needs, and adds the missing ones (an additive model version: new attributes and relationships).
    ///
    /// Returns the statements it ran. Runs in one write transaction: all or nothing.
    @discardableResult
    public func createSchema() throws -> [String] {
        // Columns may be added: what was worked out from the old ones is worked out again.
        recordingLayouts = [:]
        let run = {
            var ran: [String] = []
            let statements =
                try self.connection.tableExists(self.schema.tables[0].name)
                ? try self.migrationStatements() : self.schema.createStatements()
            for statement in statements + NewSchema.versionTableStatements {
                try self.connection.execute(statement)
                ran.append(statement)
            }
            let version = NewSchema.versionStatement(self.model.versionIdentifiers)
            try self.connection.run(version.sql, version.arguments)
            return ran
        }
        return try connection.isAutocommit ? connection.write(run) : connection.savepoint("coexist_schema", run)
    }

    /// The statements that bring existing new-schema tables up to the model: new tables, new columns.
    /// Throws ``StoreError/mismatch(path:detail:)`` for a change that cannot be made in place (a column
    /// whose type changed).
    func migrationStatements() throws -> [String] {
        var statements: [String] = []
        let all = schema.createStatements()
        for table in schema.tables {
            let existing = try connection.rows("SELECT name, type FROM pragma_table_info(?)", [.text(table.name)])
            if existing.isEmpty {
                statements += all.filter { $0.hasPrefix("CREATE TABLE \(SQLIdentifier.quoted(table.name)) (") }
                statements += all.filter { $0.contains(" ON \(SQLIdentifier.quoted(table.name)) (") }
                continue
            }
            let types = Dictionary(
                existing.map { ($0[0].textValue ?? "", $0[1].textValue ?? "") },
                uniquingKeysWith: { a, _ in a }
            )
            for column in table.columns {
                if let type = types[column.name] {
                    guard type.uppercased() == column.type else {
                        throw StoreError.mismatch(
                            path: path,
                            detail:
                                "table \(table.name) column \(column.name) is \(type), the model needs \(column.type)"
                        )
                    }
                    continue
                }
                var definition = "\(SQLIdentifier.quoted(column.name)) \(column.type)"
                if let check = column.check { definition += " CHECK (\(check))" }
                if let references = column.references {
                    definition +=
                        " REFERENCES \(SQLIdentifier.quoted(references.table)) (\"id\") ON DELETE \(references.onDelete)"
                    definition += " DEFERRABLE INITIALLY DEFERRED"
                }
                statements.append("ALTER TABLE \(SQLIdentifier.quoted(table.name)) ADD COLUMN \(definition)")
            }
        }
        statements += NewSchema.identityTableStatements
        statements += CompanionChanges.createStatements
        return statements
    }
}
