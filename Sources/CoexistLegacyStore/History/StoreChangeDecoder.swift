public import CoexistHistory
import CoexistModel
public import CoexistSQLite

/// Decodes legacy `ACHANGE` rows with a store's model and entity numbers: `ZCOLUMNS` to property names
/// (§4.3, with the store's ``LegacyStore/slotCalibration``), tombstones to named values (§4.4; a value in a
/// column past the entity's preserved attributes as `tombstone<n>`).
///
/// A row written before a migration decodes with the model version it was written under (``HistoryEras``):
/// its entity and property names are that version's.
public struct StoreChangeDecoder: LegacyChangeDecoding {
    /// How one model version's rows decode, by that version's entity numbers.
    private struct Layouts {
        var bitmaps: [Int: PropertyBitmap] = [:]
        var tombstones: [Int: TombstoneLayout] = [:]
        var names: [Int: String] = [:]
    }

    private var current = Layouts()
    private var eras: [HistoryEra] = []
    private var eraLayouts: [Layouts] = []

    /// A decoder for `store`; without a model only entity names (from `Z_PRIMARYKEY`) are known.
    public init(store: LegacyStore) {
        if let model = store.model, let schema = store.schema {
            for entity in model.entities {
                guard let number = schema.entities[entity.name]?.number else { continue }
                current.names[number] = entity.name
                current.bitmaps[number] = store.bitmap(of: entity)
                current.tombstones[number] = TombstoneLayout(entity: entity, model: model)
            }
        } else {
            for row in store.primaryKeys { current.names[row.number] = row.name }
        }
        // A record that cannot be read leaves those rows decoded as the current version's, as before.
        eras = (try? HistoryEras.read(store.connection)) ?? []
        eraLayouts = eras.map { era in
            var layouts = Layouts()
            for entity in era.model.entities {
                guard let number = era.numbers[entity.name] else { continue }
                layouts.names[number] = entity.name
                layouts.bitmaps[number] = PropertyBitmap(
                    entity: entity,
                    model: era.model,
                    oneToManyOrder: era.slotOrders[entity.name]
                )
                layouts.tombstones[number] = TombstoneLayout(entity: entity, model: era.model)
            }
            return layouts
        }
    }

    /// Decodes one row's entity, properties and tombstone.
    public func decode(
        token: Int64,
        entityNumber: Int,
        type: ChangeType,
        columns: [UInt8]?,
        tombstones values: [SQLiteValue]
    ) -> LegacyChangeDetails {
        var layouts = current
        var number = entityNumber
        if let (era, then) = HistoryEras.resolve(number: entityNumber, token: token, in: eras) {
            layouts = eraLayouts[era]
            number = then
        }
        var details = LegacyChangeDetails(entity: layouts.names[number], properties: nil, tombstone: [:])
        if type == .update, let columns { details.properties = layouts.bitmaps[number]?.decode(columns) }
        if type == .delete, let layout = layouts.tombstones[number] {
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
