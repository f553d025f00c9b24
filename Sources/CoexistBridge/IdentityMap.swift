import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistSQLite
import CoexistStore

/// The correspondence between a legacy object (`Z_PK` in its root entity's table) and its identity in the
/// new schema, kept in `coexist_identity`.
///
/// A legacy object's identity is its identity attribute's value when the new schema has one (a UUID `id`, or
/// the configured attribute), else a generated UUID recorded here on first sight.
struct IdentityMap {
    let connection: Connection
    let model: Model
    let schema: NewSchema

    func root(of entity: String) -> String {
        model.entity(named: entity).map { model.root(of: $0).name } ?? entity
    }

    /// The recorded identity of a legacy object, if any.
    func recordedID(root: String, pk: Int64) throws -> String? {
        try connection.scalar(
            "SELECT id FROM coexist_identity WHERE entity = ? AND pk = ?",
            [.text(root), .integer(pk)]
        ).textValue
    }

    /// The recorded `Z_PK` of a new-schema identity, if any.
    func recordedPK(root: String, id: String) throws -> Int64? {
        try connection.scalar("SELECT pk FROM coexist_identity WHERE entity = ? AND id = ?", [.text(root), .text(id)])
            .integerValue
    }

    /// The recorded identities of the legacy objects `pks` of `root`, by `Z_PK` (those with none are left
    /// out): one query, however many.
    func recordedIDs(root: String, pks: [Int64]) throws -> [Int64: String] {
        var found: [Int64: String] = [:]
        guard !pks.isEmpty else { return found }
        found.reserveCapacity(pks.count)
        try connection.forEachRow(
            "SELECT pk, id FROM coexist_identity WHERE entity = ? AND pk IN (SELECT value FROM json_each(?))",
            [.text(root), .text(JSONText.integers(pks))]
        ) { row in
            if let pk = row.integer(0), let id = row.text(1) { found[pk] = id }
        }
        return found
    }

    /// The recorded `Z_PK`s of the new-schema identities `ids` of `root`, by identity (those with none are
    /// left out): one query, however many.
    func recordedPKs(root: String, ids: [String]) throws -> [String: Int64] {
        var found: [String: Int64] = [:]
        found.reserveCapacity(ids.count)
        // SQLite before 3.45 (Debian 12 has 3.40) ends a `json_each` string at an escaped NUL: such an
        // identity (never one a save writes: those are UUIDs) is looked up alone.
        var (listed, alone): ([String], [String]) = ([], [])
        for id in ids {
            if id.utf8.contains(0) { alone.append(id) } else { listed.append(id) }
        }
        if !listed.isEmpty {
            try connection.forEachRow(
                "SELECT id, pk FROM coexist_identity WHERE entity = ? AND id IN (SELECT value FROM json_each(?))",
                [.text(root), .text(JSONText.strings(listed))]
            ) { row in
                if let id = row.text(0), let pk = row.integer(1) { found[id] = pk }
            }
        }
        for id in alone { found[id] = try recordedPK(root: root, id: id) }
        return found
    }

    func record(root: String, pk: Int64, id: String) throws {
        try connection.run(
            "INSERT OR REPLACE INTO coexist_identity (entity, pk, id) VALUES (?, ?, ?)",
            [.text(root), .integer(pk), .text(id)]
        )
    }

    func forget(root: String, pk: Int64) throws {
        try connection.run("DELETE FROM coexist_identity WHERE entity = ? AND pk = ?", [.text(root), .integer(pk)])
    }

    /// The identity a legacy object has (or gets) in the new schema, from its attribute values.
    ///
    /// Throws ``BridgeError/sharedIdentity(_:)`` when its identity attribute holds the identity of another
    /// legacy object already mirrored: the new schema keys objects by identity, and the two must never be
    /// merged into one row.
    func identity(for object: LegacyObject) throws -> String {
        let root = root(of: object.id.entity)
        if let recorded = try recordedID(root: root, pk: object.id.pk) { return recorded }
        var identity: String?
        switch schema.entities[object.id.entity]?.identity {
        case .uuidAttribute(let name)?:
            if case .uuid(let bytes)? = object.attributes[name] { identity = UUIDText.text(bytes) }
        case .textAttribute(let name)?:
            if case .string(let text)? = object.attributes[name], UUIDText.bytes(text.lowercased()) != nil {
                identity = text.lowercased()
            }
        default: break
        }
        if let identity, let owner = try recordedPK(root: root, id: identity), owner != object.id.pk {
            throw BridgeError.sharedIdentity(
                "\(object.id): its identity \(identity) is already that of \(root) Z_PK \(owner) in the new schema "
                    + "(Core Data allows equal ids; the new schema keys objects by id): not mirrored until its id "
                    + "is unique"
            )
        }
        let id = identity ?? Self.newIdentity()
        try record(root: root, pk: object.id.pk, id: id)
        return id
    }

    /// Records that `object` cannot be mirrored, and why (replacing an earlier reason, keeping when it was
    /// first parked); returns whether it is newly parked (what to report: a reason is said once).
    @discardableResult
    func park(_ object: ObjectID, reason: String) throws -> Bool {
        let key: [SQLiteValue] = [.text(root(of: object.entity)), .integer(object.pk)]
        let known = try connection.scalar(
            "SELECT count(*) FROM coexist_parked_object WHERE side = 'legacy' AND entity = ? AND pk = ?",
            key
        )
        if known.integerValue ?? 0 > 0 {
            try connection.run(
                "UPDATE coexist_parked_object SET reason = ? WHERE side = 'legacy' AND entity = ? AND pk = ?",
                [.text(reason)] + key
            )
            return false
        }
        try connection.run(
            "INSERT INTO coexist_parked_object (side, entity, pk, reason, parked_at) VALUES ('legacy', ?, ?, ?, ?)",
            key + [.text(reason), .real(TransactionWriter.now())]
        )
        return true
    }

    /// Forgets a parked object that has now been mirrored.
    func unpark(_ object: ObjectID) throws {
        try connection.run(
            "DELETE FROM coexist_parked_object WHERE side = 'legacy' AND entity = ? AND pk = ?",
            [.text(root(of: object.entity)), .integer(object.pk)]
        )
    }

    static func newIdentity() -> String { UUIDText.random() }
}
