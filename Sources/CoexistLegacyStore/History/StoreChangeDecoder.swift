public import CoexistHistory
import CoexistModel
public import CoexistSQLite

/// Decodes legacy `ACHANGE` rows with a store's model and entity numbers: `ZCOLUMNS` to property names
/// (§4.3, with the store's ``LegacyStore/slotCalibration``), tombstones to named values (§4.4; a value in a
/// column past the entity's preserved attributes as `tombstone<n>`).
public struct StoreChangeDecoder: LegacyChangeDecoding {
    private var bitmaps: [Int: PropertyBitmap] = [:]
    private var tombstones: [Int: TombstoneLayout] = [:]
    private var names: [Int: String] = [:]

    /// A decoder for `store`; without a model only entity names (from `Z_PRIMARYKEY`) are known.
    public init(store: LegacyStore) {
        if let model = store.model, let schema = store.schema {
            for entity in model.entities {
                guard let number = schema.entities[entity.name]?.number else { continue }
                names[number] = entity.name
                bitmaps[number] = store.bitmap(of: entity)
                tombstones[number] = TombstoneLayout(entity: entity, model: model)
            }
        } else {
            for row in store.primaryKeys { names[row.number] = row.name }
        }
    }

    /// Decodes one row's entity, properties and tombstone.
    public func decode(
        entityNumber: Int,
        type: ChangeType,
        columns: [UInt8]?,
        tombstones values: [SQLiteValue]
    ) -> LegacyChangeDetails {
        var details = LegacyChangeDetails(entity: names[entityNumber], properties: nil, tombstone: [:])
        if type == .update, let columns { details.properties = bitmaps[entityNumber]?.decode(columns) }
        if type == .delete, let layout = tombstones[entityNumber] {
            for (index, attribute) in layout.attributes.enumerated() where index < values.count {
                let stored = values[index]
                details.tombstone[attribute.name] =
                    (try? AttributeCodec.decode(stored, as: attribute)) ?? Self.untyped(stored)
            }
            // Core Data sometimes fills a column past the entity's preserved attributes (Photos: a second
            // copy of a uuid): kept as it is, under the column's own name.
            for index in layout.attributes.count..<max(layout.attributes.count, values.count)
            where values[index] != .null {
                details.tombstone["tombstone\(index)"] = Self.untyped(values[index])
            }
        }
        return details
    }

    /// A stored value kept as it is when it does not fit the attribute's type.
    static func untyped(_ value: SQLiteValue) -> AttributeValue {
        switch value {
        case .null: .null
        case .integer(let number): .integer(number)
        case .real(let number): .double(number)
        case .text(let text): .string(text)
        case .blob(let bytes): .binary(bytes)
        }
    }
}

extension HistoryReader {
    /// A reader of `store`'s shared history, decoding legacy changes with the store's model.
    ///
    /// Throws ``LegacyStoreError/notCoreDataStore(path:reason:)`` when the store has no history tables.
    public init(store: LegacyStore) throws {
        guard store.hasHistory else {
            throw LegacyStoreError.notCoreDataStore(
                path: store.path,
                reason: "no persistent-history tables (ATRANSACTION, ACHANGE)"
            )
        }
        try self.init(connection: store.connection, decoder: StoreChangeDecoder(store: store))
    }
}
