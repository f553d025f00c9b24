import CoexistModel
import CoexistSQLite

/// Decodes rows of one root table into ``LegacyObject``s: selects every column once, then picks each
/// row's columns by its concrete entity (`Z_ENT`).
struct RowDecoder {
    /// Unowned: the store caches its decoders (``LegacyStore/rowDecoder(_:)``).
    unowned let store: LegacyStore
    let model: Model
    let schema: StoreSchema
    let table: String
    let columns: [String]
    let positions: [String: Int]
    let numbers: [Int: EntityMapping]
    /// What each entity's rows decode, by `Z_ENT`: worked out once, not at every row.
    let plans: [Int: EntityPlan]

    /// The columns one entity's rows decode: each stored attribute's position, each to-one's key (and
    /// entity number) positions. A class of constants: a row's decoding borrows it rather than copying its
    /// arrays, and reads it without exclusivity checks.
    final class EntityPlan {
        let entity: Entity
        /// Each stored attribute with its column and the column's position, in slot order.
        let attributes: [(attribute: Attribute, column: String, position: Int)]
        /// Each stored to-one: its name, destination entity, key position, entity number position and
        /// destination table (names only: copying the relationship descriptions at every row cost more).
        let toOnes: [(name: String, destination: String, position: Int, entityPosition: Int?, destinationTable: String)]
        /// What a row's decoding reads of each attribute, in slot order, apart from its name and description
        /// (copying those at every row cost more than decoding).
        let decoding: [(position: Int, type: AttributeType, external: Bool)]
        /// The attribute names in slot order, shared by the rows decoded.
        let slots: AttributeSlots

        init(
            entity: Entity,
            mapping: EntityMapping,
            model: Model,
            schema: StoreSchema,
            positions: [String: Int]
        ) {
            self.entity = entity
            var attributes: [(attribute: Attribute, column: String, position: Int)] = []
            for attribute in model.allAttributes(of: entity) where !attribute.isTransient {
                guard case .attribute(let column) = mapping.properties[attribute.name], let position = positions[column]
                else { continue }
                attributes.append((attribute, column, position))
            }
            var toOnes:
                [(name: String, destination: String, position: Int, entityPosition: Int?, destinationTable: String)] =
                    []
            for relationship in model.allRelationships(of: entity)
            where !relationship.isToMany && !relationship.isTransient {
                guard case .toOne(let column, let entityColumn, _) = mapping.properties[relationship.name],
                    let position = positions[column]
                else { continue }
                toOnes.append(
                    (
                        relationship.name, relationship.destination, position, entityColumn.flatMap { positions[$0] },
                        schema.entities[relationship.destination]?.table ?? ""
                    )
                )
            }
            self.attributes = attributes
            self.toOnes = toOnes
            decoding = attributes.map { ($0.position, $0.attribute.type, $0.attribute.allowsExternalBinaryDataStorage) }
            slots = AttributeSlots(attributes.map(\.attribute.name), types: attributes.map(\.attribute.type))
        }
    }

    /// The positions of `Z_PK`, `Z_ENT` and `Z_OPT`, found once.
    let keyPosition: Int
    let entityPosition: Int?
    let versionPosition: Int?

    init(store: LegacyStore, model: Model, schema: StoreSchema, table: String) throws(LegacyStoreError) {
        guard let columns = store.tables[table] else {
            throw .modelMismatch(path: store.path, detail: "table \(table) does not exist")
        }
        self.store = store
        self.model = model
        self.schema = schema
        self.table = table
        self.columns = columns
        var positions: [String: Int] = [:]
        for (offset, column) in columns.enumerated() { positions[column] = offset }
        self.positions = positions
        keyPosition = positions["Z_PK"] ?? 0
        entityPosition = positions["Z_ENT"]
        versionPosition = positions["Z_OPT"]
        var numbers: [Int: EntityMapping] = [:]
        for mapping in schema.entities.values where mapping.table == table { numbers[mapping.number] = mapping }
        self.numbers = numbers
        var plans: [Int: EntityPlan] = [:]
        for (number, mapping) in numbers {
            guard let entity = model.entity(named: mapping.name) else { continue }
            plans[number] = EntityPlan(
                entity: entity,
                mapping: mapping,
                model: model,
                schema: schema,
                positions: positions
            )
        }
        self.plans = plans
        selectList = columns.map(SQLIdentifier.quoted).joined(separator: ", ")
        qualifiedSelectList = columns.map { "t0." + SQLIdentifier.quoted($0) }.joined(separator: ", ")
        selectByKey = "SELECT \(selectList) FROM \(SQLIdentifier.quoted(table)) WHERE Z_PK = ?"
    }

    /// Every column, quoted, for a SELECT.
    let selectList: String
    /// Every column of the table aliased `t0`, for a SELECT with joins (``ObjectQuery``).
    let qualifiedSelectList: String
    /// The statement reading one row by `Z_PK`.
    let selectByKey: String

    /// The object in `row`, its attributes by name.
    func decode(_ row: Row) throws(LegacyStoreError) -> LegacyObject { LegacyObject(try decodeSlotted(row)) }

    /// The object in `row`, its attributes by slot.
    func decodeSlotted(_ row: Row) throws(LegacyStoreError) -> SlottedObject {
        let pk = row[keyPosition].integerValue ?? 0
        let number = entityPosition.flatMap { row[$0].integerValue }
        guard let number, let plan = plans[Int(number)] else {
            throw .invalidData(
                path: store.path,
                detail:
                    "\(table) row Z_PK=\(pk): Z_ENT \(number.map(String.init) ?? "NULL") is not an entity of the model"
            )
        }
        let entity = plan.entity
        var values: [AttributeValue] = []
        values.reserveCapacity(plan.decoding.count)
        for (index, (position, type, external)) in plan.decoding.enumerated() {
            do {
                values.append(try AttributeCodec.decode(row[position], type: type, external: external))
            } catch {
                let (attribute, column, _) = plan.attributes[index]
                throw .invalidData(
                    path: store.path,
                    detail: "\(table) row Z_PK=\(pk) column \(column) (\(entity.name).\(attribute.name)): \(error)"
                )
            }
        }
        var toOne: [String: ObjectID] = [:]
        for (name, destination, position, entityPosition, destinationTable) in plan.toOnes {
            guard let key = row[position].integerValue else { continue }
            if let entityPosition {
                toOne[name] = try store.objectID(
                    pk: key,
                    entityNumber: row[entityPosition].integerValue,
                    table: destinationTable
                )
            } else {
                toOne[name] = ObjectID(entity: destination, pk: key)
            }
        }
        let version = versionPosition.flatMap { row[$0].integerValue } ?? 0
        return SlottedObject(
            id: ObjectID(entity: entity.name, pk: pk),
            version: version,
            slots: plan.slots,
            values: values,
            toOne: toOne
        )
    }
}
