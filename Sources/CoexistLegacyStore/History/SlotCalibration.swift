public import CoexistModel
public import CoexistSQLite

/// The order of the one-to-many slots (group 5 of ``PropertyBitmap``) of each entity, learnt from a
/// store's own history (coredata-sqlite-format.md §4.3).
///
/// Ground truth: when a save inserts a child whose to-one points at a parent and also updates the parent, the
/// parent's `ZCOLUMNS` sets the slot of that to-one's inverse to-many. For each (parent entity, one-to-many)
/// the slots set by every such update are intersected; one slot left pins the relationship there. Two
/// relationships pinned to one slot contradict each other: neither is used (``conflicts``). Relationships
/// not pinned keep the model's order in the slots left.
public struct SlotCalibration: Sendable, Equatable {
    /// What is known of one one-to-many's slot.
    public enum Evidence: Sendable, Equatable, CustomStringConvertible {
        /// Pinned by this many child inserts.
        case observed(Int)
        /// The only one-to-many of its entity: its slot follows from the layout.
        case inferred
        /// Not pinned: the model's order is a guess.
        case unknown

        public var description: String {
            switch self {
            case .observed(let count): "observed (\(count) inserts)"
            case .inferred: "inferred"
            case .unknown: "unknown"
            }
        }
    }

    /// Per concrete entity, its one-to-many names by slot (group 5 order).
    public private(set) var order: [String: [String]] = [:]
    /// Per entity and one-to-many, how its slot is known.
    public private(set) var evidence: [String: [String: Evidence]] = [:]
    /// Contradictions found (two relationships pinned to one slot), one line each.
    public private(set) var conflicts: [String] = []

    /// No calibration: the model's order everywhere.
    public init() {}

    /// Learns from the history of the store `connection` holds, read through `schema` with `model`, since
    /// the last migration. Reads only; a store without history (or entities without evidence) keeps the
    /// model's order.
    public init(connection: Connection, model: Model, schema: StoreSchema) throws {
        // Only rows of the current model version: older ones have another layout (see ``HistoryEras``).
        let eraStart = try HistoryEras.currentEraStart(connection)
        var candidates: [String: [String: (slots: Set<Int>, count: Int)]] = [:]
        for parent in model.entities where !parent.isAbstract {
            guard let parentNumber = schema.entities[parent.name]?.number else { continue }
            let layout = PropertyBitmap(entity: parent, model: model)
            let names = Array(layout.slots[layout.oneToMany])
            guard names.count > 1 else {
                for name in names { evidence[parent.name, default: [:]][name] = .inferred }
                continue
            }
            for name in names {
                guard
                    let relationship = model.allRelationships(of: parent).first(where: { $0.name == name }),
                    let inverse = model.inverse(of: relationship)
                else { continue }
                let children = model.entity(named: relationship.destination).map(model.hierarchy(from:)) ?? []
                for child in children where !child.isAbstract && !inverse.isToMany {
                    guard let mapping = schema.entities[child.name],
                        case .toOne(let column, let entityColumn, _)? = mapping.properties[inverse.name]
                    else { continue }
                    let parentKind = entityColumn.map { "AND t.\(SQLIdentifier.quoted($0)) = \(parentNumber) " } ?? ""
                    let rows = try connection.rows(
                        """
                        SELECT p.ZCOLUMNS FROM ACHANGE c
                        JOIN ACHANGE p ON p.ZTRANSACTIONID = c.ZTRANSACTIONID AND p.ZCHANGETYPE = 1 AND p.ZENTITY = ?2
                        JOIN \(SQLIdentifier.quoted(mapping.table)) t ON t.Z_PK = c.ZENTITYPK
                        AND t.\(SQLIdentifier.quoted(column)) = p.ZENTITYPK \(parentKind)
                        WHERE c.ZCHANGETYPE = 0 AND c.ZENTITY = ?1 AND c.ZTRANSACTIONID > ?3
                        """,
                        [.integer(Int64(mapping.number)), .integer(Int64(parentNumber)), .integer(eraStart)]
                    )
                    for row in rows {
                        guard case .blob(let bytes) = row[0], bytes.count == layout.byteCount else { continue }
                        let set = Set(layout.oneToMany.filter { bytes[$0 / 8] & (0x80 >> UInt8($0 % 8)) != 0 })
                        var known = candidates[parent.name, default: [:]][name] ?? (set, 0)
                        known = (known.slots.intersection(set), known.count + 1)
                        candidates[parent.name, default: [:]][name] = known
                    }
                }
            }
            var pinned: [Int: [String]] = [:]
            for (name, known) in candidates[parent.name] ?? [:] where known.slots.count == 1 {
                if let slot = known.slots.first { pinned[slot, default: []].append(name) }
            }
            var slots: [Int: String] = [:]
            for (slot, holders) in pinned.sorted(by: { $0.key < $1.key }) {
                guard holders.count == 1, let name = holders.first else {
                    conflicts.append(
                        "\(parent.name): \(holders.sorted().joined(separator: " and ")) both pinned to slot \(slot)"
                    )
                    continue
                }
                slots[slot] = name
                evidence[parent.name, default: [:]][name] = .observed(candidates[parent.name]?[name]?.count ?? 0)
            }
            var rest = names.filter { !slots.values.contains($0) }
            var ordered: [String] = []
            for slot in layout.oneToMany {
                if let name = slots[slot] {
                    ordered.append(name)
                } else if !rest.isEmpty {
                    ordered.append(rest.removeFirst())
                }
            }
            for name in names where evidence[parent.name]?[name] == nil {
                evidence[parent.name, default: [:]][name] = .unknown
            }
            if ordered != names { order[parent.name] = ordered }
        }
    }

    /// The calibration kept in the store (`coexist_slot_order`, written by the bridge so that what was learnt
    /// outlives the history it was learnt from, which pruning removes); nil when the table does not exist.
    public static func stored(in connection: Connection) throws -> SlotCalibration? {
        guard try connection.tableExists(table) else { return nil }
        var calibration = SlotCalibration()
        let rows = try connection.rows(
            "SELECT entity, relationship, evidence, observations FROM \(table) ORDER BY entity, position"
        )
        for row in rows {
            guard let entity = row[0].textValue, let name = row[1].textValue else { continue }
            calibration.order[entity, default: []].append(name)
            let evidence: Evidence =
                switch row[2].textValue {
                case "observed": .observed(Int(row[3].integerValue ?? 0))
                case "inferred": .inferred
                default: .unknown
                }
            calibration.evidence[entity, default: [:]][name] = evidence
        }
        return calibration
    }

    /// What was stored, with what `learnt` knows besides: an entity keeps its stored order when any of its
    /// slots was observed, and takes the learnt one otherwise (the history may have pinned it since).
    public func merged(with learnt: SlotCalibration) -> SlotCalibration {
        var result = learnt
        for (entity, known) in evidence
        where known.values.contains(where: { if case .observed = $0 { true } else { false } }) {
            result.evidence[entity] = known
            result.order[entity] = order[entity]
        }
        return result
    }

    /// Replaces the stored calibration with this one (inside the caller's write transaction): every entity
    /// with evidence, its one-to-manys in slot order.
    public func store(in connection: Connection, model: Model) throws {
        try connection.execute(
            """
            CREATE TABLE IF NOT EXISTS \(Self.table) (
                entity TEXT NOT NULL, relationship TEXT NOT NULL, position INTEGER NOT NULL,
                evidence TEXT NOT NULL CHECK (evidence = 'observed' OR evidence = 'inferred' OR evidence = 'unknown'),
                observations INTEGER NOT NULL DEFAULT 0,
                PRIMARY KEY (entity, relationship)
            ) STRICT
            """
        )
        try connection.execute("DELETE FROM \(Self.table)")
        for (entity, known) in evidence.sorted(by: { $0.key < $1.key }) {
            guard let definition = model.entity(named: entity) else { continue }
            let layout = bitmap(of: definition, in: model)
            for (position, name) in layout.slots[layout.oneToMany].enumerated() {
                let (kind, count): (String, Int) =
                    switch known[name] ?? .unknown {
                    case .observed(let count): ("observed", count)
                    case .inferred: ("inferred", 0)
                    case .unknown: ("unknown", 0)
                    }
                try connection.run(
                    "INSERT INTO \(Self.table) (entity, relationship, position, evidence, observations) VALUES (?, ?, ?, ?, ?)",
                    [.text(entity), .text(name), .integer(Int64(position)), .text(kind), .integer(Int64(count))]
                )
            }
        }
    }

    /// The bridge's table of learnt slot orders.
    public static let table = "coexist_slot_order"

    /// The bitmap of `entity` with this calibration.
    public func bitmap(of entity: Entity, in model: Model) -> PropertyBitmap {
        PropertyBitmap(entity: entity, model: model, oneToManyOrder: order[entity.name])
    }
}
