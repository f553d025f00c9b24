import CoexistLegacyStore
import CoexistModel
import CoexistRuntime
import CoexistSQLite
import CoexistStore
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// *migrate*: `coexistctl migrate` of a demo store at TaskModel (1.0.0) to TaskModel 2 with `--rows` tasks
/// (and a category per 100) on both sides, against, in the same run and on copies of the same file, the work
/// it cannot avoid: the `VACUUM INTO` backup, one `INSERT … SELECT` of every row of every table it rebuilds
/// into fresh tables, in one transaction (the set-based limit), and the `integrity_check` it ends with. Time
/// and peak RSS.
enum MigrateScenario {
    struct Result: Sendable {
        var rows: Int
        var seconds: Double
        var peakKilobytes: Int
        var backupSeconds: Double
        var copySeconds: Double
        var checkSeconds: Double
    }

    static func run(modelPath: String, rows: Int) throws -> Result {
        let versions = try XCDataModelReader.readVersions(path: modelPath)
        guard let v1 = versions.first(where: { $0.name == "TaskModel" })?.model, versions.count >= 2 else {
            throw BenchError("\(modelPath): the migrate scenario needs the demo model's TaskModel and TaskModel 2")
        }
        var template = Array("/tmp/coexist-bench.XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw SystemError(call: "mkdtemp", code: errno)
        }
        let directory = String(cString: made)
        defer { _ = try? ChildProcess(path: "/bin/rm", arguments: ["-rf", directory], quiet: true).wait() }
        let path = directory + "/Migrate.sqlite"
        _ = try StoreCreator.create(path: path, model: v1)
        try NewStore(path: path, model: v1).createSchema()
        try fill(path, rows: rows)
        let copy = directory + "/Copy.sqlite"
        let connection = try Connection(path: path)
        try connection.run("VACUUM INTO ?", [.text(copy)])

        // The set-based limit, on the copy: every row of the rebuilt tables copied once.
        let limit = try Connection(path: copy, options: OpenOptions(walMode: false))
        var start = Measure.now()
        try limit.write {
            for table in ["ZTASK", "ZCATEGORY", "task", "category"] {
                try limit.execute(
                    "CREATE TABLE \(SQLIdentifier.quoted("copy_" + table)) AS SELECT * FROM \(SQLIdentifier.quoted(table))"
                )
            }
        }
        let copySeconds = Double(Measure.now() - start) / 1e9
        // The check the migration ends with, alone.
        start = Measure.now()
        _ = try connection.rows("PRAGMA integrity_check")
        let checkSeconds = Double(Measure.now() - start) / 1e9
        start = Measure.now()
        try connection.run("VACUUM INTO ?", [.text(directory + "/Backup.sqlite")])
        let backupSeconds = Double(Measure.now() - start) / 1e9

        start = Measure.now()
        let child = try ChildProcess(
            path: ChildProcess.executableDirectory() + "/coexistctl",
            arguments: ["migrate", path, "--model", modelPath, "--to", "TaskModel 2"],
            quiet: true
        )
        let (status, peak) = child.waitWithPeakMemory()
        guard status == 0 else { throw BenchError("coexistctl migrate exited \(status)") }
        let seconds = Double(Measure.now() - start) / 1e9
        let migrated = try connection.scalar("SELECT count(*) FROM ZTASK WHERE ZPRIORITY = 0").integerValue ?? 0
        guard migrated == Int64(rows) else { throw BenchError("the migrated store has \(migrated) of \(rows) tasks") }
        return Result(
            rows: rows,
            seconds: seconds,
            peakKilobytes: peak,
            backupSeconds: backupSeconds,
            copySeconds: copySeconds,
            checkSeconds: checkSeconds
        )
    }

    /// `rows` tasks and a category per 100, on both sides, written set-based.
    static func fill(_ path: String, rows: Int) throws {
        let connection = try Connection(path: path)
        let categories = max(1, rows / 100)
        try connection.write {
            try connection.run(
                """
                WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < ?1)
                INSERT INTO ZCATEGORY (Z_PK, Z_ENT, Z_OPT, ZID, ZNAME) SELECT x, 1, 1, randomblob(16), 'category ' || x FROM n
                """,
                [.integer(Int64(categories))]
            )
            try connection.run(
                """
                WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < ?1)
                INSERT INTO ZTASK (Z_PK, Z_ENT, Z_OPT, ZID, ZTITLE, ZISCOMPLETED, ZCREATEDAT, ZCATEGORY)
                SELECT x, 2, 1, randomblob(16), 'task ' || x, x % 2, 7.5e8 + x, 1 + x % ?2 FROM n
                """,
                [.integer(Int64(rows)), .integer(Int64(categories))]
            )
            try connection.run(
                "UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_NAME = 'Category'",
                [.integer(Int64(categories))]
            )
            try connection.run("UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_NAME = 'Task'", [.integer(Int64(rows))])
            func uuid(_ column: String) -> String {
                "lower(substr(hex(\(column)), 1, 8) || '-' || substr(hex(\(column)), 9, 4) || '-' || "
                    + "substr(hex(\(column)), 13, 4) || '-' || substr(hex(\(column)), 17, 4) || '-' || substr(hex(\(column)), 21))"
            }
            try connection.execute(
                "INSERT INTO category (id, name) SELECT \(uuid("ZID")), ZNAME FROM ZCATEGORY"
            )
            try connection.execute(
                """
                INSERT INTO task (id, title, is_completed, created_at, category_id)
                SELECT \(uuid("ZID")), ZTITLE, ZISCOMPLETED, ZCREATEDAT,
                (SELECT \(uuid("c.ZID")) FROM ZCATEGORY c WHERE c.Z_PK = ZTASK.ZCATEGORY)
                FROM ZTASK
                """
            )
        }
        _ = try connection.checkpoint()
    }
}
