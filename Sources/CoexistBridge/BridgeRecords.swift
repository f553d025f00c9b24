public import CoexistSQLite

/// The bridge's records an operator looks at: parked transactions and objects, and resolved conflicts
/// (`coexistctl parked`, `coexistctl conflicts`). Reading works on a read-only connection; every function
/// returns nothing for a store the bridge never ran on.
public enum BridgeRecords {
    /// A parked transaction (`token`) or object (`entity`, `pk`).
    public struct Parked: Sendable, Hashable, Encodable {
        /// `transaction` or `object`.
        public var kind: String
        /// The source side it waits to be mirrored from.
        public var side: String
        /// The source transaction, for a parked transaction.
        public var token: Int64?
        /// The root entity and `Z_PK`, for a parked object.
        public var entity: String?
        public var pk: Int64?
        /// Why it could not be mirrored, as last tried.
        public var reason: String
        /// When it was first parked, seconds since 2001.
        public var parkedAt: Double
    }

    /// Every parked item, oldest first.
    public static func parked(_ connection: Connection) throws -> [Parked] {
        var result: [Parked] = []
        if try connection.tableExists("coexist_parked") {
            result += try connection.rows("SELECT token, side, error, parked_at FROM coexist_parked").map {
                Parked(
                    kind: "transaction",
                    side: $0[1].textValue ?? "",
                    token: $0[0].integerValue,
                    reason: $0[2].textValue ?? "",
                    parkedAt: $0[3].numericValue ?? 0
                )
            }
        }
        if try connection.tableExists("coexist_parked_object") {
            result += try connection.rows("SELECT side, entity, pk, reason, parked_at FROM coexist_parked_object").map {
                Parked(
                    kind: "object",
                    side: $0[0].textValue ?? "",
                    entity: $0[1].textValue,
                    pk: $0[2].integerValue,
                    reason: $0[3].textValue ?? "",
                    parkedAt: $0[4].numericValue ?? 0
                )
            }
        }
        return result.sorted { ($0.parkedAt, $0.token ?? 0, $0.pk ?? 0) < ($1.parkedAt, $1.token ?? 0, $1.pk ?? 0) }
    }

    /// Forgets a parked transaction: the bridge gives up mirroring it (`verify` then shows what differs).
    /// Returns false when it is not parked.
    public static func dropParked(_ connection: Connection, token: Int64) throws -> Bool {
        guard try connection.tableExists("coexist_parked") else { return false }
        try connection.run("DELETE FROM coexist_parked WHERE token = ?", [.integer(token)])
        return connection.changes > 0
    }

    /// Forgets a parked object; false when it is not parked.
    public static func dropParkedObject(
        _ connection: Connection,
        side: String,
        entity: String,
        pk: Int64
    ) throws
        -> Bool
    {
        guard try connection.tableExists("coexist_parked_object") else { return false }
        try connection.run(
            "DELETE FROM coexist_parked_object WHERE side = ? AND entity = ? AND pk = ?",
            [.text(side), .text(entity), .integer(pk)]
        )
        return connection.changes > 0
    }

    /// One conflict the bridge resolved: two sides changed the same property of an object in transactions
    /// neither had seen; the policy chose the winner.
    public struct Conflict: Sendable, Hashable, Encodable {
        public var id: Int64
        /// Seconds since 2001.
        public var detectedAt: Double
        public var entity: String
        public var objectID: String
        public var property: String
        public var winnerToken: Int64
        public var winnerSide: String
        public var loserToken: Int64
        public var loserSide: String
        public var policy: String
    }

    /// Conflicts in detection order whose winning or losing token is after `sinceToken` and detected at or
    /// after `sinceTime` (seconds since 2001), at most `limit`.
    public static func conflicts(
        _ connection: Connection,
        sinceToken: Int64 = 0,
        sinceTime: Double? = nil,
        limit: Int = .max
    ) throws -> [Conflict] {
        guard try connection.tableExists("coexist_conflict") else { return [] }
        return try connection.rows(
            """
            SELECT id, detected_at, entity, object_id, property, winner_token, winner_side, loser_token, loser_side, policy
            FROM coexist_conflict WHERE max(winner_token, loser_token) > ?1 AND detected_at >= ?2 ORDER BY id LIMIT ?3
            """,
            [
                .integer(sinceToken), .real(sinceTime ?? -Double.greatestFiniteMagnitude),
                .integer(Int64(clamping: limit)),
            ]
        ).map { row in
            Conflict(
                id: row[0].integerValue ?? 0,
                detectedAt: row[1].numericValue ?? 0,
                entity: row[2].textValue ?? "",
                objectID: row[3].textValue ?? "",
                property: row[4].textValue ?? "",
                winnerToken: row[5].integerValue ?? 0,
                winnerSide: row[6].textValue ?? "",
                loserToken: row[7].integerValue ?? 0,
                loserSide: row[8].textValue ?? "",
                policy: row[9].textValue ?? ""
            )
        }
    }
}
