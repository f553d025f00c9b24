import CoexistModel
import CoexistSQLite

/// How faithfully the store's history decodes (`coexistctl inspect --check-history`): every update's
/// `ZCOLUMNS` against its entity's layout (coredata-sqlite-format.md §4.3), and the calibration of the
/// one-to-many slots. Reads only. Rows from before a migration (``HistoryEras``) are not checked.
public struct HistoryCheck: Sendable, Encodable {
    /// Update rows checked.
    public var updates = 0
    /// Rows whose bitmap is not the length of their entity's layout.
    public var wrongLength = 0
    /// Rows with a slot set past their entity's last property.
    public var pastTheEnd = 0
    /// Rows of an entity number the model does not have.
    public var unknownEntity = 0
    /// Contradictions in the learnt one-to-many order.
    public var calibrationConflicts: [String] = []
    /// The first problems found, one line each (at most ``maximumExamples``).
    public var examples: [String] = []

    /// Lines of ``examples`` kept.
    public static let maximumExamples = 20

    /// Whether nothing is wrong.
    public var passed: Bool {
        wrongLength == 0 && pastTheEnd == 0 && unknownEntity == 0 && calibrationConflicts.isEmpty
    }

    /// Checks `store`'s history (none: nothing to check, passed).
    public init(store: LegacyStore) throws {
        guard store.hasHistory, let model = store.model, let schema = store.schema else { return }
        var layouts: [Int: (String, PropertyBitmap)] = [:]
        for entity in model.entities {
            if let number = schema.entities[entity.name]?.number, let layout = store.bitmap(of: entity) {
                layouts[number] = (entity.name, layout)
            }
        }
        calibrationConflicts = store.slotCalibration.conflicts
        // Rows written under an earlier model version (before a migration) have that version's layouts.
        let start = try HistoryEras.currentEraStart(store.connection)
        try store.connection.forEachRow(
            "SELECT Z_PK, ZENTITY, ZCOLUMNS FROM ACHANGE WHERE ZCHANGETYPE = 1 AND ZTRANSACTIONID > ?",
            [.integer(start)]
        ) { row in
            updates += 1
            let change = row[0].integerValue ?? 0
            let number = Int(row[1].integerValue ?? -1)
            guard let (name, layout) = layouts[number] else {
                unknownEntity += 1
                note("change \(change): entity number \(number) is not in the model")
                return
            }
            let bytes = row[2].blobValue ?? []
            if bytes.count != layout.byteCount {
                wrongLength += 1
                note("change \(change) (\(name)): \(bytes.count) bytes, the layout has \(layout.byteCount)")
            } else if layout.decode(bytes) == nil {
                pastTheEnd += 1
                note("change \(change) (\(name)): a slot past the last of \(layout.slots.count) is set")
            }
        }
    }

    private mutating func note(_ line: String) {
        if examples.count < Self.maximumExamples { examples.append(line) }
    }

    /// The report as text: one summary line, then the examples and conflicts.
    public var text: String {
        var lines = [
            passed
                ? "history check passed: \(updates) updates decode with the layout"
                : "history check FAILED: of \(updates) updates, \(wrongLength) of the wrong length, \(pastTheEnd) "
                    + "with a slot past the end, \(unknownEntity) of an unknown entity; "
                    + "\(calibrationConflicts.count) calibration conflicts"
        ]
        lines += examples.map { "  " + $0 }
        lines += calibrationConflicts.map { "  calibration: " + $0 }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// Each entity's `ZCOLUMNS` slots as the store reads and writes them (`coexistctl inspect --slots`).
public struct SlotLayoutReport: Sendable, Encodable {
    /// One slot.
    public struct Slot: Sendable, Encodable, Equatable {
        public var index: Int
        public var property: String
        /// ``PropertyBitmap/groupNames``.
        public var group: String
        /// For a to-many: `observed (n inserts)`, `inferred` or `unknown` (§4.3: groups 5–6 are learnt).
        public var evidence: String?
    }

    /// One entity's layout.
    public struct EntityLayout: Sendable, Encodable, Equatable {
        public var entity: String
        public var bytes: Int
        public var slots: [Slot]
    }

    public var entities: [EntityLayout] = []

    /// The layouts of `store`'s entities (none without a model).
    public init(store: LegacyStore) {
        guard let model = store.model else { return }
        let calibration = store.slotCalibration
        for entity in model.entities.sorted(by: { $0.name < $1.name }) {
            guard let layout = store.bitmap(of: entity) else { continue }
            var slots: [Slot] = []
            for (group, range) in layout.groups.enumerated() {
                for index in range {
                    let property = layout.slots[index]
                    var evidence: String?
                    if group == 4 {
                        let known = calibration.evidence[entity.name]?[property]
                        evidence = (known ?? (range.count == 1 ? .inferred : .unknown)).description
                    } else if group == 5 {
                        evidence = range.count == 1 ? "inferred" : "unknown"
                    }
                    slots.append(
                        Slot(
                            index: index,
                            property: property,
                            group: PropertyBitmap.groupNames[group],
                            evidence: evidence
                        )
                    )
                }
            }
            entities.append(EntityLayout(entity: entity.name, bytes: layout.byteCount, slots: slots))
        }
    }

    /// One line per entity: its slots in order, to-manys with their evidence.
    public var text: String {
        entities.map { layout in
            "\(layout.entity) (\(layout.bytes) bytes): "
                + layout.slots.map { slot in
                    "\(slot.index) \(slot.property)" + (slot.group == "to-one entity" ? " (entity)" : "")
                        + (slot.group == "to-one order" ? " (order)" : "")
                        + (slot.evidence.map { " [\($0)]" } ?? "")
                }.joined(separator: ", ")
        }.joined(separator: "\n") + "\n"
    }
}
