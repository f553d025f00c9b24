import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistSQLite
import CoexistStore
import Foundation
import TestSupport
import Testing

/// `coexistctl migrate` and coexistd's version check, as an operator runs them: the demo store at
/// TaskModel (1.0.0) with history, the configured model at TaskModel 2 (2.0.0).
@Suite struct MigrateCommandTests {
    /// A demo store at V1 with a category, two tasks and an update in its history.
    func v1Store(in directory: TemporaryDirectory) throws -> String {
        let store = try DemoStore.createVersion1(in: directory)
        let path = store.path
        var task = ObjectID(entity: "Task", pk: 0)
        try store.save(SaveMetadata(author: "old-app")) { save in
            let work = try save.insert("Category", ["id": DemoStore.uuid(1), "name": .string("Work")])
            task = try save.insert("Task", ["id": DemoStore.uuid(2), "title": .string("one"), "createdAt": .date(1)])
            try save.setToOne(task, "category", work)
            _ = try save.insert("Task", ["id": DemoStore.uuid(3), "title": .string("two"), "createdAt": .date(2)])
        }
        try store.save(SaveMetadata(author: "old-app")) { save in
            try save.update(task, ["title": .string("one, renamed"), "isCompleted": .boolean(true)])
        }
        return path
    }

    @Test func coexistdRefusesAnOlderStoreNamingBothVersionsAndTheCommand() throws {
        let directory = try TemporaryDirectory()
        let path = try v1Store(in: directory)
        let before = try directory.contents()
        let result = try ProductProcess.run(
            "coexistd",
            ["--database", path, "--model", Fixtures.demoModel, "--socket", directory.file("c.sock"), "--once"]
        )
        #expect(result.status == 78)
        #expect(
            result.stderr.contains(
                "is at model version TaskModel (1.0.0), older than the configured TaskModel 2 (2.0.0)"
            ),
            "\(result.stderr)"
        )
        #expect(result.stderr.contains("coexistctl migrate \(path) --model \(Fixtures.demoModel)"))
        #expect(try directory.contents() == before, "refusing leaves the file untouched")
    }

    @Test func dryRunThenFailureThenMigrationThenTheDaemonServesIt() throws {
        let directory = try TemporaryDirectory()
        let path = try v1Store(in: directory)
        let arguments = ["migrate", path, "--model", Fixtures.demoModel]
        // A dry run prints the steps and statements and changes nothing.
        let before = try directory.contents()
        let dry = try ProductProcess.run("coexistctl", arguments + ["--dry-run", "--json"])
        #expect(dry.status == 0, "\(dry.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(dry.stdout.utf8)) as? [String: Any])
        #expect(report["from"] as? String == "TaskModel")
        #expect(report["to"] as? String == "TaskModel 2")
        #expect(report["dryRun"] as? Bool == true)
        #expect(dry.stderr.contains("VersionInfo.plist"), "the hashes are removed, and the operator told")
        #expect(try directory.contents() == before)
        // A failure after the step (the test hook): everything rolled back, exit 70, the backup is there.
        var environment = ProcessInfo.processInfo.environment
        environment["COEXIST_MIGRATION_FAIL_AT"] = "1"
        let failed = try ProductProcess.run("coexistctl", arguments, environment: environment)
        #expect(failed.status == 70, "\(failed.stderr)")
        #expect(failed.stderr.contains("rolled back"))
        #expect(
            failed.stderr.contains("the backup made before is kept at \(path).backup-TaskModel-"),
            "\(failed.stderr)"
        )
        let after = try directory.contents()
        #expect(after[path.split(separator: "/").last.map(String.init) ?? ""] == before["Tasks.sqlite"])
        #expect(after.keys.contains { $0.hasPrefix("Tasks.sqlite.backup-TaskModel-") })
        // The migration itself.
        let migrated = try ProductProcess.run("coexistctl", arguments)
        #expect(migrated.status == 0, "\(migrated.stderr)")
        #expect(migrated.stdout.contains("backup: \(path).backup-TaskModel-"))
        #expect(migrated.stdout.contains("Task.priority added"))
        #expect(
            try RawSQLite.rows(path, "SELECT ZTITLE, ZPRIORITY, ZNOTES FROM ZTASK ORDER BY Z_PK") == [
                [.text("one, renamed"), .integer(0), .text("")], [.text("two"), .integer(0), .text("")],
            ]
        )
        // The history from before still shows, decoded with the version it was written under.
        let shown = try ProductProcess.run("coexistctl", ["history", "show", path, "2", "--json"])
        #expect(shown.status == 0, "\(shown.stderr)")
        let transaction = try #require(
            try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any]
        )
        let changes = try #require(transaction["changes"] as? [[String: Any]])
        #expect(changes.count == 1)
        #expect(changes.first?["entity"] as? String == "Task")
        #expect(changes.first?["properties"] as? [String] == ["isCompleted", "title"], "\(shown.stdout)")
        // At the target already: nothing to do.
        let again = try ProductProcess.run("coexistctl", arguments)
        #expect(again.status == 0)
        #expect(again.stdout.contains("is at TaskModel 2 already"))
        // And coexistd serves it with the V2 model: initial sync, both schemas equal.
        let served = try ProductProcess.run(
            "coexistd",
            ["--database", path, "--model", Fixtures.demoModel, "--socket", directory.file("c.sock"), "--once"]
        )
        #expect(served.status == 0, "\(served.stderr)")
        #expect(try RawSQLite.rows(path, "SELECT title, priority FROM task ORDER BY title").count == 2)
        let verified = try ProductProcess.run("coexistctl", ["verify", path, "--model", Fixtures.demoModel])
        #expect(verified.status == 0, "\(verified.stdout)\(verified.stderr)")
    }

    @Test func refusalsExitWithTheirCodes() throws {
        let directory = try TemporaryDirectory()
        let path = try v1Store(in: directory)
        let before = try directory.contents()
        let model = ["--model", Fixtures.demoModel]
        let unknown = try ProductProcess.run("coexistctl", ["migrate", path, "--to", "TaskModel 9"] + model)
        #expect(unknown.status == 65)
        #expect(unknown.stderr.contains("no version TaskModel 9"))
        let notFolder = try ProductProcess.run(
            "coexistctl",
            ["migrate", path, "--model", Fixtures.demoModel + "/TaskModel.xcdatamodel"]
        )
        #expect(notFolder.status == 64)
        let policy = try ProductProcess.run(
            "coexistctl",
            ["migrate", directory.copy(Fixtures.moody5), "--model", Fixtures.moodyXcdatamodeld, "--to", "Moody 6"]
        )
        #expect(policy.status == 65)
        #expect(policy.stderr.contains("Country5ToCountry6Policy"), "\(policy.stderr)")
        let after = try directory.contents().filter { $0.key != "Moody 5.moody" }
        #expect(after == before)
    }

    /// `auto-migrate = lightweight`: coexistd migrates the older store itself at start, then serves it; a step
    /// with a mapping model is refused (exit 78) and the store is left alone.
    @Test func coexistdAutoMigratesLightweightStepsOnly() throws {
        let directory = try TemporaryDirectory()
        let path = try v1Store(in: directory)
        let notify = try NotifyListener(path: directory.file("notify"))
        var environment = ProcessInfo.processInfo.environment
        environment["NOTIFY_SOCKET"] = notify.path
        for name in ["INVOCATION_ID", "JOURNAL_STREAM", "SYSTEMD_EXEC_PID"] { environment[name] = nil }
        let served = try ProductProcess.run(
            "coexistd",
            [
                "--database", path, "--model", Fixtures.demoModel, "--socket", directory.file("c.sock"),
                "--auto-migrate", "lightweight", "--once",
            ],
            environment: environment
        )
        #expect(served.status == 0, "\(served.stderr)")
        // systemd was told each phase, each time with more time for the start, from the first beat on.
        var messages: [String] = []
        while let message = notify.receive(timeout: 0.5) { messages.append(message) }
        let migrating = messages.filter { $0.contains("STATUS=auto-migrate: ") }
        #expect(migrating.first?.hasPrefix("STATUS=auto-migrate: starting (0 s)") == true, "\(messages.prefix(4))")
        #expect(migrating.contains { $0.contains("step 1 of 1") }, "\(migrating)")
        #expect(migrating.allSatisfy { $0.hasSuffix("EXTEND_TIMEOUT_USEC=30000000") }, "\(migrating)")
        #expect(try LegacyStore(path: path).metadata.modelVersionIdentifiers == ["2.0.0"])
        #expect(try directory.contents().keys.contains { $0.hasPrefix("Tasks.sqlite.backup-TaskModel-") })
        #expect(try RawSQLite.rows(path, "SELECT count(*) FROM task WHERE priority = 0") == [[.integer(2)]])

        let moody = try directory.copy(Fixtures.moody)
        let before = try #require(FileManager.default.contents(atPath: moody))
        let refused = try ProductProcess.run(
            "coexistd",
            [
                "--database", moody, "--model", Fixtures.moodyXcdatamodeld, "--socket", directory.file("m.sock"),
                "--auto-migrate", "lightweight", "--once",
            ]
        )
        #expect(refused.status == 78)
        #expect(refused.stderr.contains("lightweight steps only"), "\(refused.stderr)")
        #expect(FileManager.default.contents(atPath: moody) == before)
    }

    /// Marks `version` current in the `.xcdatamodeld` at `folder`, as Xcode does when the app ships it.
    func makeCurrent(_ version: String, in folder: String) throws {
        let marker = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>\(version).xcdatamodel</string></dict></plist>
            """
        try Data(marker.utf8).write(to: URL(fileURLWithPath: folder + "/.xccurrentversion"))
    }

    /// A coexistd serving a V1 store is asked to migrate once the app ships V2: it stops mirroring,
    /// migrates, resumes from its cursor with V2, and its subscribers are told and go on.
    @Test func aRunningCoexistdMigratesOnRequestAndTellsSubscribers() throws {
        let directory = try TemporaryDirectory()
        let models = directory.file("TaskModel.xcdatamodeld")
        try FileManager.default.copyItem(atPath: Fixtures.demoModel, toPath: models)
        try makeCurrent("TaskModel", in: models)
        let path = try v1Store(in: directory)
        let daemon = try DaemonProcess(database: path, directory: directory, options: ["--model", models])
        defer { daemon.stop() }
        let subscriber = try SocketClient(path: daemon.socket)
        subscriber.send(#"{"op":"subscribe","since":"now"}"# + "\n")
        #expect(subscriber.readLine()?.contains("subscribed") == true)
        // Data on both sides: the new app writes too, under V1, and it is mirrored.
        let v1 = try XCDataModelReader.readVersions(path: models)[0].model
        let newV1 = try NewStore(path: path, model: v1)
        let written =
            try newV1.save(SaveMetadata(author: "new-app")) { save in
                try save.insert("Category", id: "00000000-0000-0000-0000-0000000000c1", ["name": .string("Home")])
            }.token ?? 0
        let mirrored = try ProductProcess.run("coexistctl", ["wait", String(written), "--database", path])
        #expect(mirrored.status == 0, "\(mirrored.stderr) \(daemon.log)")

        try makeCurrent("TaskModel 2", in: models)
        let migrated = try ProductProcess.run("coexistctl", ["migrate", path, "--model", models])
        #expect(migrated.status == 0, "\(migrated.stderr) \(daemon.log)")
        #expect(migrated.stdout.contains("coexistd migrated the store: TaskModel → TaskModel 2"), "\(migrated.stdout)")
        var told: [String: Any]?
        while let line = subscriber.readLine() {
            let message = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            if message?["type"] as? String == "schema_changed" {
                told = message
                break
            }
        }
        #expect(told?["from"] as? String == "TaskModel")
        #expect(told?["to"] as? String == "TaskModel 2")

        // Mirroring goes on under V2, both ways, and the subscriber still gets events.
        let store = try LegacyStore(path: path, options: OpenOptions())
        let token =
            try store.save(SaveMetadata(author: "old-app")) { save in
                _ = try save.insert(
                    "Task",
                    [
                        "id": DemoStore.uuid(9), "title": .string("after"), "createdAt": .date(9),
                        "priority": .integer(7),
                    ]
                )
            }.token ?? 0
        let waited = try ProductProcess.run("coexistctl", ["wait", String(token), "--database", path])
        #expect(waited.status == 0, "\(waited.stdout)\(waited.stderr)")
        #expect(try RawSQLite.rows(path, "SELECT priority FROM task WHERE title = 'after'") == [[.integer(7)]])
        var sawEvent = false
        while let line = subscriber.readLine() {
            if line.contains("\"event\"") && line.contains("\(token)") {
                sawEvent = true
                break
            }
        }
        #expect(sawEvent, "the subscriber goes on after schema_changed")
        // Every row kept, with the defaults on both sides (priority 0, notes "", color "blue").
        #expect(
            try RawSQLite.rows(path, "SELECT ZTITLE, ZPRIORITY, ZNOTES FROM ZTASK ORDER BY ZTITLE") == [
                [.text("after"), .integer(7), .text("")], [.text("one, renamed"), .integer(0), .text("")],
                [.text("two"), .integer(0), .text("")],
            ]
        )
        #expect(
            try RawSQLite.rows(path, "SELECT title, priority, notes FROM task ORDER BY title") == [
                [.text("after"), .integer(7), .text("")], [.text("one, renamed"), .integer(0), .text("")],
                [.text("two"), .integer(0), .text("")],
            ]
        )
        #expect(
            try RawSQLite.rows(path, "SELECT ZNAME, ZCOLOR FROM ZCATEGORY ORDER BY ZNAME")
                == [[.text("Home"), .text("blue")], [.text("Work"), .text("blue")]]
        )
        #expect(
            try RawSQLite.rows(path, "SELECT name, color FROM category ORDER BY name")
                == [[.text("Home"), .text("blue")], [.text("Work"), .text("blue")]]
        )
        // The new app, now at V2, writes: mirrored to the Core Data side.
        let v2 = try XCDataModelReader.readVersions(path: models)[1].model
        let newV2 = try NewStore(path: path, model: v2)
        let fromNew =
            try newV2.save(SaveMetadata(author: "new-app")) { save in
                try save.insert(
                    "Category",
                    id: "00000000-0000-0000-0000-0000000000c2",
                    ["name": .string("Garden"), "color": .string("green")]
                )
            }.token ?? 0
        #expect(try ProductProcess.run("coexistctl", ["wait", String(fromNew), "--database", path]).status == 0)
        #expect(try RawSQLite.rows(path, "SELECT ZCOLOR FROM ZCATEGORY WHERE ZNAME = 'Garden'") == [[.text("green")]])
        let verified = try ProductProcess.run("coexistctl", ["verify", path, "--model", models])
        #expect(verified.status == 0, "\(verified.stdout)\(verified.stderr)")
        #expect(daemon.log.contains("migrated \(path): TaskModel → TaskModel 2"), "\(daemon.log)")
    }

    /// `--mapping PATH` runs a mapping model kept elsewhere: without it the step 2 → 3 is inferred
    /// (`Mood.continent` empty), with it the continent comes from `$source.country.continent`.
    @Test func aMappingModelGivenByPathIsRun() throws {
        let directory = try TemporaryDirectory()
        let models = directory.file("Moody.xcdatamodeld")
        try FileManager.default.copyItem(atPath: Fixtures.moodyXcdatamodeld, toPath: models)
        let mappingFolder = Fixtures.moodyXcdatamodeld.split(separator: "/").dropLast().joined(separator: "/")
        let mapping = "/" + mappingFolder + "/Moody 2-Moody 3.xcmappingmodel"
        let inferred = try directory.copy(Fixtures.moody, as: "Inferred.moody")
        let mapped = try directory.copy(Fixtures.moody, as: "Mapped.moody")
        let plain = try ProductProcess.run("coexistctl", ["migrate", inferred, "--model", models, "--to", "Moody 3"])
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(
            try RawSQLite.rows(inferred, "SELECT count(*) FROM ZMOOD WHERE ZCONTINENT IS NOT NULL") == [[.integer(0)]]
        )
        let run = try ProductProcess.run(
            "coexistctl",
            ["migrate", mapped, "--model", models, "--to", "Moody 3", "--mapping", mapping, "--json"]
        )
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            try RawSQLite.rows(
                mapped,
                "SELECT count(*) FROM ZMOOD m JOIN ZGEOGRAPHICREGION c ON c.Z_PK = m.ZCOUNTRY WHERE m.ZCONTINENT = c.ZCONTINENT"
            )
                == RawSQLite.rows(mapped, "SELECT count(*) FROM ZMOOD")
        )
        let wrong = try ProductProcess.run(
            "coexistctl",
            ["migrate", mapped, "--model", models, "--mapping", directory.file("nothing.xcmappingmodel")]
        )
        #expect(wrong.status == 66, "\(wrong.stderr)")
    }

    /// CoreDataPlus SampleModel V1 with history written under V1, migrated to V3: `history show` still shows
    /// it with V1's names (ExpensiveSportCar, since renamed LuxuryCar).
    @Test func historyFromBeforeShowsAfterSampleModelV1ToV3() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.copy(Fixtures.sampleModelV1)
        let store = try LegacyStore(path: path, options: OpenOptions())
        let car = try #require(try store.objects(of: "ExpensiveSportCar").first).id
        try store.save(SaveMetadata(author: "old-app")) { save in
            try save.update(car, ["isLimitedEdition": .boolean(true)])
        }
        let migrated = try ProductProcess.run(
            "coexistctl",
            ["migrate", path, "--model", Fixtures.sampleModelXcdatamodeld, "--to", "SampleModel3"]
        )
        #expect(migrated.status == 0, "\(migrated.stderr)")
        let shown = try ProductProcess.run("coexistctl", ["history", "show", path, "1", "--json"])
        #expect(shown.status == 0, "\(shown.stderr)")
        let transaction = try #require(
            try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any]
        )
        let change = try #require((transaction["changes"] as? [[String: Any]])?.first)
        #expect(change["entity"] as? String == "ExpensiveSportCar")
        #expect(change["properties"] as? [String] == ["isLimitedEdition"])
        #expect(try RawSQLite.rows(path, "PRAGMA foreign_key_check").isEmpty)
    }
}
