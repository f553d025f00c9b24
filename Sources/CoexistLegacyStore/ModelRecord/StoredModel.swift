public import CoexistModel
public import CoexistSQLite
import FoundationEssentials

/// coexist's own copy of the model, for stores that have no usable `Z_MODELCACHE` (the stores coexist
/// creates: that cache is a Core Data runtime archive we do not write).
///
/// Kept in the table `coexist_model` (one row: the model as JSON and where it came from). Core Data
/// ignores tables outside its `Z`/`A` namespaces, so the store stays a valid Core Data store.
enum StoredModel {
    static let table = "coexist_model"

    static let createSQL =
        "CREATE TABLE IF NOT EXISTS coexist_model (id INTEGER PRIMARY KEY CHECK (id = 1), source TEXT NOT NULL, model TEXT NOT NULL) STRICT"

    /// The statements that write (or replace) the stored model, creating its table when absent.
    static func statements(_ model: Model) throws -> [(sql: String, arguments: [SQLiteValue])] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let json = String(decoding: try encoder.encode(model), as: UTF8.self)
        return [
            (createSQL, []),
            (
                "INSERT OR REPLACE INTO coexist_model (id, source, model) VALUES (1, ?, ?)",
                [.text(model.source), .text(json)]
            ),
        ]
    }

    /// Writes (or replaces) the stored model.
    static func write(_ model: Model, to connection: Connection) throws {
        for statement in try statements(model) { try connection.run(statement.sql, statement.arguments) }
    }

    /// The stored model, or nil when the store has none.
    static func read(_ connection: Connection, tables: [String: [String]]) throws(LegacyStoreError) -> Model? {
        guard tables[table] != nil else { return nil }
        let rows: [[SQLiteValue]]
        do {
            rows = try connection.rows("SELECT source, model FROM coexist_model WHERE id = 1")
        } catch {
            throw .sqlite(error)
        }
        guard let row = rows.first, let json = row[1].textValue else { return nil }
        let source = "coexist_model of \(connection.path)"
        do {
            let model = try JSONDecoder().decode(Model.self, from: Data(json.utf8))
            return try model.validated(source: source)
        } catch let error as ModelError {
            throw .model(error)
        } catch {
            throw .model(ModelError(file: source, message: "cannot decode the stored model: \(error)"))
        }
    }
}

extension LegacyStore {
    /// The statements that record `model` as the store's own copy of its model (`coexist_model`, which
    /// Core Data ignores), replacing the one there: for a migration, inside its transaction.
    public static func storedModelStatements(_ model: Model) throws -> [(sql: String, arguments: [SQLiteValue])] {
        try StoredModel.statements(model)
    }
}
