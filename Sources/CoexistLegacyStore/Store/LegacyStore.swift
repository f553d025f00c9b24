public import CoexistModel
public import CoexistSQLite

/// An open Core Data SQLite store: its connection, metadata, entity numbers and, when a model is known,
/// where every entity and property lives.
///
/// Opening checks, in order: the file header (missing, empty, truncated, not SQLite), that SQLite can read
/// the schema, and that `Z_METADATA` and `Z_PRIMARYKEY` exist. The model is the one given, else the store's
/// own `Z_MODELCACHE`, else coexist's copy in `coexist_model`, else none (entity numbers and tables still come from `Z_PRIMARYKEY`).
public final class LegacyStore {
    /// Where the model came from.
    public enum ModelSource: Sendable, Equatable, CustomStringConvertible {
        /// Given by the caller, read from a file.
        case file(String)
        /// Decoded from the store's `Z_MODELCACHE`.
        case modelCache
        /// coexist's own copy (`coexist_model`), written when coexist created the store.
        case stored
        /// No model: the store has no cache and none was given.
        case none

        public var description: String {
            switch self {
            case .file(let path): path
            case .modelCache: "Z_MODELCACHE"
            case .stored: "coexist_model"
            case .none: "none"
            }
        }
    }

    /// The database file.
    public let path: String
    /// The connection; confined, like the store, to one task.
    public let connection: Connection
    /// `Z_METADATA`.
    public let metadata: StoreMetadata
    /// `Z_PRIMARYKEY`, by entity number.
    public let primaryKeys: [PrimaryKeyRow]
    /// The store's tables and their columns.
    public internal(set) var tables: [String: [String]] {
        didSet { rowDecoders.removeAll() }
    }
    /// Row decoders by root table, built once per table layout.
    var rowDecoders: [String: RowDecoder] = [:]
    /// The model, when one is known.
    public let model: Model?
    /// Where ``model`` came from.
    public let modelSource: ModelSource
    /// Entity and property storage, when ``model`` is known.
    public let schema: StoreSchema?

    /// Opens the store at `path`.
    ///
    /// - Parameters:
    ///   - model: the model to use; nil to read the store's `Z_MODELCACHE`.
    ///   - modelPath: where `model` was read from, for reports.
    ///   - options: SQLite options; read-only by default.
    public convenience init(
        path: String,
        model: Model? = nil,
        modelPath: String? = nil,
        options: OpenOptions = .readOnly
    ) throws(LegacyStoreError) {
        do {
            _ = try DatabaseFileHeader.read(path: path)
        } catch {
            throw .file(error)
        }
        let connection: Connection
        do {
            connection = try Connection(path: path, options: options)
        } catch {
            throw Self.classify(error, path: path)
        }
        try self.init(connection: connection, model: model, modelPath: modelPath)
    }

    /// Opens the store on an existing connection, which the store then shares with its other users (the
    /// bridge uses one connection for both schemas, so that a mirrored change is one SQLite transaction).
    public init(connection: Connection, model: Model? = nil, modelPath: String? = nil) throws(LegacyStoreError) {
        path = connection.path
        self.connection = connection
        do {
            tables = try StoreSchema.readTables(connection)
        } catch {
            throw Self.classify(error, path: connection.path)
        }
        for required in ["Z_METADATA", "Z_PRIMARYKEY"] where tables[required] == nil {
            throw .notCoreDataStore(path: path, reason: "no \(required) table")
        }
        metadata = try StoreMetadata.read(connection)
        primaryKeys = try PrimaryKeyTable.read(connection)
        if let model {
            self.model = model
            modelSource = .file(modelPath ?? model.source)
        } else if let cached = try Self.readModelCache(connection, tables: tables) {
            self.model = cached
            modelSource = .modelCache
        } else if let stored = try StoredModel.read(connection, tables: tables) {
            self.model = stored
            modelSource = .stored
        } else {
            self.model = nil
            modelSource = .none
        }
        if let resolved = self.model {
            schema = try StoreSchema.resolve(model: resolved, primaryKeys: primaryKeys, tables: tables, path: path)
        } else {
            schema = nil
        }
    }

    /// The order of the one-to-many slots of `ZCOLUMNS`: what the bridge keeps in the store
    /// (``SlotCalibration/stored(in:)``), else what the store's history shows, learnt when first needed
    /// (read only: nothing is written); the model's order where neither says anything.
    public var slotCalibration: SlotCalibration {
        if let known = calibration { return known }
        let learnt = (try? SlotCalibration.stored(in: connection)) ?? learntCalibration()
        calibration = learnt
        return learnt
    }
    private var calibration: SlotCalibration?

    /// What the store's history shows of the one-to-many slots now (nothing without history).
    public func learntCalibration() -> SlotCalibration {
        guard hasHistory, let model, let schema,
            let learnt = try? SlotCalibration(connection: connection, model: model, schema: schema)
        else { return SlotCalibration() }
        return learnt
    }

    /// Keeps in the store what its history teaches of the one-to-many slots, merged with what was kept
    /// before (``SlotCalibration/merged(with:)``), inside the caller's write transaction; the store then
    /// reads and writes with it. For the bridge and `inspect --calibrate`.
    public func keepCalibration() throws {
        guard let model else { return }
        let stored = try SlotCalibration.stored(in: connection)
        let learnt = learntCalibration()
        let kept = stored.map { $0.merged(with: learnt) } ?? learnt
        if kept != stored { try kept.store(in: connection, model: model) }
        calibration = kept
        bitmaps.removeAll()
    }

    /// The `ZCOLUMNS` layout of `entity` in this store (``slotCalibration`` applied).
    public func bitmap(of entity: Entity) -> PropertyBitmap? {
        guard let model else { return nil }
        if let known = bitmaps[entity.name] { return known }
        let bitmap = slotCalibration.bitmap(of: entity, in: model)
        bitmaps[entity.name] = bitmap
        return bitmap
    }
    private var bitmaps: [String: PropertyBitmap] = [:]

    /// The attributes the store's own persistent triggers write, by entity (inherited ones included): Core
    /// Data's derived attributes, and those an app's triggers maintain (``TriggerMaintainedColumns``).
    public func triggerMaintainedAttributes() throws -> [String: [String]] {
        guard let schema else { return [:] }
        let columns = try TriggerMaintainedColumns.read(connection)
        guard !columns.isEmpty else { return [:] }
        var found: [String: [String]] = [:]
        for (name, mapping) in schema.entities {
            for (property, storage) in mapping.properties {
                guard case .attribute(let column) = storage,
                    columns.contains([mapping.table.uppercased(), column.uppercased()])
                else { continue }
                found[name, default: []].append(property)
            }
        }
        return found.mapValues { $0.sorted() }
    }

    /// Whether the store has Core Data's persistent-history tables.
    public var hasHistory: Bool {
        tables["ATRANSACTION"] != nil && tables["ACHANGE"] != nil && tables["ATRANSACTIONSTRING"] != nil
    }

    private static func readModelCache(
        _ connection: Connection,
        tables: [String: [String]]
    ) throws(LegacyStoreError) -> Model? {
        guard tables["Z_MODELCACHE"] != nil else { return nil }
        let content: SQLiteValue
        do {
            content = try connection.scalar("SELECT Z_CONTENT FROM Z_MODELCACHE LIMIT 1")
        } catch {
            throw .sqlite(error)
        }
        guard let bytes = content.blobValue, !bytes.isEmpty else { return nil }
        do {
            return try ModelCacheDecoder(source: "Z_MODELCACHE of \(connection.path)").decode(compressed: bytes)
        } catch {
            throw .model(error)
        }
    }

    /// Maps an SQLite failure while opening to the most precise store error.
    static func classify(_ error: SQLiteError, path: String) -> LegacyStoreError {
        var error = error
        error.path = path
        if error.primaryCode == 26 {  // SQLITE_NOTADB
            return .file(.notSQLite(path: path))
        }
        return .sqlite(error)
    }
}
