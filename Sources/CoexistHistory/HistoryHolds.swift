public import CoexistSQLite

/// What holds history back from pruning, so that nothing anyone still needs is deleted: the bridge (its
/// cursor, or just before its oldest parked transaction: what it has not mirrored yet) and the durable
/// consumers of the event socket (what each has not acknowledged). `coexistctl history prune`, coexistd's
/// retention and the adapters' `deleteHistory` cut no later than these.
public enum HistoryHolds {
    /// The newest token the bridge no longer needs, nil when the file has no bridge.
    public static func bridge(_ connection: Connection) throws -> Int64? {
        guard try connection.tableExists("coexist_bridge"),
            let cursor = try connection.scalar("SELECT cursor FROM coexist_bridge WHERE id = 1").integerValue
        else { return nil }
        guard try connection.tableExists("coexist_parked"),
            let parked = try connection.scalar("SELECT min(token) FROM coexist_parked").integerValue
        else { return cursor }
        return min(cursor, parked - 1)
    }

    /// The oldest token a durable consumer has acknowledged, nil when there is none.
    public static func consumers(_ connection: Connection) throws -> Int64? {
        guard try connection.tableExists("coexist_consumer") else { return nil }
        return try connection.scalar("SELECT min(acked) FROM coexist_consumer").integerValue
    }

    /// The newest token whose history neither the bridge nor any durable consumer needs; nil when nothing
    /// holds history.
    public static func bound(_ connection: Connection) throws -> Int64? {
        [try bridge(connection), try consumers(connection)].compactMap { $0 }.min()
    }
}
