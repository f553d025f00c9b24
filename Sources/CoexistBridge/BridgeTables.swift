import CoexistSQLite

/// The bridge's own tables, created beside both schemas:
///
/// - `coexist_bridge`: one row, the cursor (the last token fully handled) and initial-sync progress;
/// - `coexist_mirror`: which token each mirrored transaction got, per source token (exactly once: the
///   source token is the primary key);
/// - `coexist_conflict`: every conflict detected and how the policy resolved it;
/// - `coexist_parked`: source transactions that could not be mirrored (with the error), skipped so that
///   the bridge keeps serving;
/// - `coexist_parked_object`: single objects that cannot be mirrored (a legacy object whose identity another
///   object already has), with the reason; the rest of their transaction is mirrored, and the object is
///   tried again whenever a transaction touches it.
enum BridgeTables {
    static let statements = [
        """
        CREATE TABLE IF NOT EXISTS coexist_bridge (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            cursor INTEGER NOT NULL,
            initial_sync TEXT,
            updated_at REAL NOT NULL
        ) STRICT
        """,
        """
        CREATE TABLE IF NOT EXISTS coexist_mirror (
            source_token INTEGER PRIMARY KEY,
            source_side TEXT NOT NULL,
            mirror_token INTEGER NOT NULL
        ) STRICT
        """,
        """
        CREATE TABLE IF NOT EXISTS coexist_conflict (
            id INTEGER PRIMARY KEY,
            detected_at REAL NOT NULL,
            entity TEXT NOT NULL,
            object_id TEXT NOT NULL,
            property TEXT NOT NULL,
            winner_token INTEGER NOT NULL,
            winner_side TEXT NOT NULL,
            loser_token INTEGER NOT NULL,
            loser_side TEXT NOT NULL,
            policy TEXT NOT NULL
        ) STRICT
        """,
        """
        CREATE TABLE IF NOT EXISTS coexist_parked (
            token INTEGER PRIMARY KEY,
            side TEXT NOT NULL,
            error TEXT NOT NULL,
            parked_at REAL NOT NULL
        ) STRICT
        """,
        """
        CREATE TABLE IF NOT EXISTS coexist_parked_object (
            side TEXT NOT NULL,
            entity TEXT NOT NULL,
            pk INTEGER NOT NULL,
            reason TEXT NOT NULL,
            parked_at REAL NOT NULL,
            PRIMARY KEY (side, entity, pk)
        ) STRICT
        """,
    ]

    /// Parked transactions and objects, for `status`.
    static func parkedCount(_ connection: Connection) throws -> Int {
        let value = try connection.scalar(
            "SELECT (SELECT count(*) FROM coexist_parked) + (SELECT count(*) FROM coexist_parked_object)"
        )
        return Int(value.integerValue ?? 0)
    }

    static func create(_ connection: Connection) throws {
        for statement in statements { try connection.execute(statement) }
    }
}
