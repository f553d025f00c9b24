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
    /// The plan of the table's one entity, when it holds one only (most tables): found without hashing.
    let onlyPlan: (number: Int64, plan: EntityPlan)?

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
        /// The key positions of ``toOnes``: a row whose keys are all NULL (most rows) names no target.
        let toOneKeyPositions: [Int]
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
            toOneKeyPositions = toOnes.map(\.position)
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
        onlyPlan = plans.count == 1 ? plans.first.map { (Int64($0.key), $0.value) } : nil
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
        let (pk, plan) = try self.plan(of: row)
        // Built in place: no reserve then growth check per value.
        let decoding = plan.decoding
        var failure: (index: Int, error: AttributeCodec.Failure)?
        let values = [AttributeValue](unsafeUninitializedCapacity: decoding.count) { buffer, initialized in
            for index in decoding.indices {
                let (position, type, external) = decoding[index]
                do throws(AttributeCodec.Failure) {
                    buffer.initializeElement(
                        at: index,
                        to: try AttributeCodec.decode(row, at: position, type: type, external: external)
                    )
                } catch {
                    failure = (index, error)
                    return
                }
                initialized = index + 1
            }
        }
        if let (index, error) = failure { throw refusal(pk, plan, index, error) }
        return SlottedObject(
            id: ObjectID(entity: plan.entity.name, pk: pk),
            version: versionPosition.map(row.int64) ?? 0,
            slots: plan.slots,
            values: values,
            toOne: try toOnes(of: row, plan)
        )
    }

    /// The object in `row`, its attributes appended to the block `blocks` has room in.
    func decode(_ row: Row, into blocks: inout AttributeBlocks) throws(LegacyStoreError) -> BlockObject {
        let (pk, plan) = try self.plan(of: row)
        let decoding = plan.decoding
        let block = blocks.room(for: decoding.count)
        let base = block.count
        for index in decoding.indices {
            let (position, type, external) = decoding[index]
            do throws(AttributeCodec.Failure) {
                block.append(try AttributeCodec.decode(row, at: position, type: type, external: external))
            } catch {
                // The values appended stay in the block, unused: the query fails.
                throw refusal(pk, plan, index, error)
            }
        }
        return BlockObject(
            id: ObjectID(entity: plan.entity.name, pk: pk),
            version: versionPosition.map(row.int64) ?? 0,
            slots: plan.slots,
            block: block,
            base: base,
            toOne: try toOnes(of: row, plan)
        )
    }

    /// The key of `row` and what its entity's rows decode.
    private func plan(of row: Row) throws(LegacyStoreError) -> (pk: Int64, plan: EntityPlan) {
        // `Z_PK` holds integers only (the rowid of a store's table).
        let pk = row.int64(keyPosition)
        let number = entityPosition.flatMap(row.integer)
        let found: EntityPlan? =
            if let onlyPlan, number == onlyPlan.number { onlyPlan.plan } else { number.flatMap { plans[Int($0)] } }
        guard let plan = found else {
            throw .invalidData(
                path: store.path,
                detail:
                    "\(table) row Z_PK=\(pk): Z_ENT \(number.map(String.init) ?? "NULL") is not an entity of the model stored in \(table)"
            )
        }
        return (pk, plan)
    }

    /// The error for the attribute at `index` of `plan` whose stored value does not fit.
    private func refusal(
        _ pk: Int64,
        _ plan: EntityPlan,
        _ index: Int,
        _ error: AttributeCodec.Failure
    ) -> LegacyStoreError {
        let (attribute, column, _) = plan.attributes[index]
        return .invalidData(
            path: store.path,
            detail: "\(table) row Z_PK=\(pk) column \(column) (\(plan.entity.name).\(attribute.name)): \(error)"
        )
    }

    /// The to-ones `row` sets, by name.
    private func toOnes(of row: Row, _ plan: EntityPlan) throws(LegacyStoreError) -> [String: ObjectID] {
        // Checked by position first: walking the to-ones copies their names.
        guard plan.toOneKeyPositions.contains(where: { !row.isNull($0) }) else { return [:] }
        var toOne = [String: ObjectID]()
        for (name, destination, position, entityPosition, destinationTable) in plan.toOnes {
            guard let key = row.integer(position) else { continue }
            if let entityPosition {
                toOne[name] = try store.objectID(
                    pk: key,
                    entityNumber: row.integer(entityPosition),
                    table: destinationTable
                )
            } else {
                toOne[name] = ObjectID(entity: destination, pk: key)
            }
        }
        return toOne
    }
}
