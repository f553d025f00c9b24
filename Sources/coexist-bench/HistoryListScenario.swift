import CoexistHistory
import CoexistRuntime
import CoexistSQLite

/// *history-list*: `coexistctl history list --json` over histories of growing size (one Task insert per
/// transaction, written straight into `ATRANSACTION`/`ACHANGE` as Core Data lays them out), its time and
/// peak RSS at each size: the listing pages through the history, so memory must not grow with it.
enum HistoryListScenario {
    struct Point: Sendable {
        var transactions: Int
        var seconds: Double
        var peakKilobytes: Int
    }

    static func run(modelPath: String, sizes: [Int]) throws -> [Point] {
        let store = try BenchStore(modelPath: modelPath)
        defer { store.remove() }
        let connection = try Connection(path: store.path)
        let task = try connection.scalar("SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Task'").integerValue ?? 0
        var written = 0
        var points: [Point] = []
        for size in sizes.sorted() where size > written {
            try connection.write {
                try connection.run(
                    """
                    WITH RECURSIVE n(x) AS (SELECT ?1 UNION ALL SELECT x + 1 FROM n WHERE x < ?2)
                    INSERT INTO ATRANSACTION (Z_PK, Z_ENT, Z_OPT, ZTIMESTAMP) SELECT x, 16002, NULL, 7.5e8 + x FROM n
                    """,
                    [.integer(Int64(written + 1)), .integer(Int64(size))]
                )
                try connection.run(
                    """
                    WITH RECURSIVE n(x) AS (SELECT ?1 UNION ALL SELECT x + 1 FROM n WHERE x < ?2)
                    INSERT INTO ACHANGE (Z_PK, Z_ENT, Z_OPT, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZTRANSACTIONID)
                    SELECT x, 16001, NULL, 0, ?3, x, x FROM n
                    """,
                    [.integer(Int64(written + 1)), .integer(Int64(size)), .integer(task)]
                )
                try connection.run(
                    "UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT IN (16001, 16002)",
                    [.integer(Int64(size))]
                )
            }
            _ = try connection.checkpoint()
            written = size
            let start = Measure.now()
            let child = try ChildProcess(
                path: ChildProcess.executableDirectory() + "/coexistctl",
                arguments: ["history", "list", store.path, "--json"],
                quiet: true
            )
            let (status, peak) = child.waitWithPeakMemory()
            guard status == 0 else { throw BenchError("coexistctl history list exited \(status)") }
            points.append(Point(transactions: size, seconds: Double(Measure.now() - start) / 1e9, peakKilobytes: peak))
        }
        return points
    }
}
