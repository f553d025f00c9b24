import CoexistHistory
import CoexistLegacyStore
import CoexistSQLite
import Foundation
import TestSupport
import Testing

/// `coexistctl history list` filters and `prune` on real stores, `consumers`, and the promise that reading
/// commands leave a store byte for byte as it was (its `-wal` and `-shm` included).
@Suite struct HistoryToolsTests {
    /// Every file of the store: the database, its `-wal` and `-shm` (nil when absent).
    static func files(_ path: String) -> [Data?] {
        ["", "-wal", "-shm"].map { FileManager.default.contents(atPath: path + $0) }
    }

    static func lines(_ arguments: [String]) throws -> Int {
        let result = try ProductProcess.run("coexistctl", arguments)
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        return result.stdout.split(separator: "\n").count
    }

    /// Photos 26.1 (its history partly in the WAL): each filter lists as many transactions as SQL over a
    /// second copy counts, and no reading command changes a byte of the copy it reads.
    @Test func photosFiltersEqualSQLAndReadingChangesNothing() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.copy(Fixtures.photos)
        let reference = try Connection(path: try directory.copy(Fixtures.photos, as: "Reference.sqlite"))
        let before = Self.files(path)
        func count(_ sql: String) throws -> Int { Int(try reference.scalar(sql).integerValue ?? -1) }
        let assets = """
            WITH RECURSIVE e(n) AS (SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Asset'
              UNION SELECT Z_ENT FROM Z_PRIMARYKEY JOIN e ON Z_SUPER = e.n) SELECT n FROM e
            """
        let middleTime =
            try reference.scalar("SELECT ZTIMESTAMP FROM ATRANSACTION ORDER BY Z_PK LIMIT 1 OFFSET 200")
            .numericValue ?? 0
        let iso = ISO8601DateFormatter().string(from: Date(timeIntervalSinceReferenceDate: middleTime.rounded(.up)))
        let cases: [([String], String)] = [
            ([], "SELECT count(*) FROM ATRANSACTION"),
            (["--type", "insert"], "SELECT count(DISTINCT ZTRANSACTIONID) FROM ACHANGE WHERE ZCHANGETYPE = 0"),
            (["--type", "delete"], "SELECT count(DISTINCT ZTRANSACTIONID) FROM ACHANGE WHERE ZCHANGETYPE = 2"),
            (["--entity", "Asset"], "SELECT count(DISTINCT ZTRANSACTIONID) FROM ACHANGE WHERE ZENTITY IN (\(assets))"),
            (
                ["--entity", "Asset", "--type", "update"],
                "SELECT count(DISTINCT ZTRANSACTIONID) FROM ACHANGE WHERE ZCHANGETYPE = 1 AND ZENTITY IN (\(assets))"
            ),
            (["--after", iso], "SELECT count(*) FROM ATRANSACTION WHERE ZTIMESTAMP >= \(middleTime.rounded(.up))"),
            (["--before", iso], "SELECT count(*) FROM ATRANSACTION WHERE ZTIMESTAMP < \(middleTime.rounded(.up))"),
            (["--since", "10", "--until", "300"], "SELECT count(*) FROM ATRANSACTION WHERE Z_PK > 10 AND Z_PK <= 300"),
            (["--side", "legacy"], "SELECT count(*) FROM ATRANSACTION"),
            (["--side", "new"], "SELECT 0"),
            (["--after", "1h"], "SELECT 0"),
            (["--limit", "7", "--type", "update"], "SELECT 7"),
        ]
        for (filter, sql) in cases {
            let expected = try count(sql)
            #expect(try Self.lines(["history", "list", path] + filter) == expected, "\(filter)")
            #expect(try Self.lines(["history", "list", path, "--json"] + filter) == expected, "\(filter) --json")
        }
        #expect(try count("SELECT count(*) FROM ATRANSACTION") == 410)
        let stats = try ProductProcess.run("coexistctl", ["history", "stats", path, "--json"])
        #expect(stats.status == 0, "\(stats.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [String: Any] ?? [:]
        let history = report["history"] as? [String: Any] ?? [:]
        let changes = try count("SELECT count(*) FROM ACHANGE")
        #expect(history["transactions"] as? Int == 410 && history["changes"] as? Int == changes, "\(history)")
        let authors = history["authors"] as? [[String: Any]] ?? []
        #expect(authors.reduce(0) { $0 + ($1["transactions"] as? Int ?? 0) } == 410)
        #expect(authors.reduce(0) { $0 + ($1["changes"] as? Int ?? 0) } == changes)
        let entities = history["entities"] as? [[String: Any]] ?? []
        #expect(entities.reduce(0) { $0 + ($1["changes"] as? Int ?? 0) } == changes)
        let assetUpdates = try count("SELECT count(*) FROM ACHANGE WHERE ZCHANGETYPE = 1 AND ZENTITY IN (\(assets))")
        let asset = entities.first { $0["entity"] as? String == "Asset" && $0["type"] as? String == "update" }
        #expect(asset?["changes"] as? Int == assetUpdates, "\(entities)")
        let days = history["days"] as? [[String: Any]] ?? []
        #expect(days.reduce(0) { $0 + ($1["transactions"] as? Int ?? 0) } <= 410 && !days.isEmpty)
        let bytes = history["bytes"] as? [String: Int] ?? [:]
        #expect((bytes["ACHANGE"] ?? 0) > 0 && (bytes["ATRANSACTION"] ?? 0) > 0, "\(history["bytes"] ?? "nil")")
        for arguments in [
            ["inspect", path], ["inspect", path, "--json"], ["inspect", path, "--check-history"],
            ["inspect", path, "--slots"], ["history", "show", path, "5", "--json"], ["history", "stats", path],
            ["history", "export", path],
            ["history", "prune", path, "--before", "300", "--dry-run"],
            ["history", "prune", path, "--older-than", "1d", "--dry-run", "--json"], ["consumers", "list", path],
        ] {
            #expect(try ProductProcess.run("coexistctl", arguments).status == 0, "\(arguments)")
        }
        #expect(try ProductProcess.run("coexistctl", ["verify", path]).status == 1)
        #expect(Self.files(path) == before, "a reading command changed the store")
    }

    /// On a terminal, `prune` asks before deleting: "n" deletes nothing (exit 1), "y" prunes.
    @Test func pruneAsksOnATerminal() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.copy(Fixtures.photos)
        let script = Fixtures.repository + "/Tests/EndToEndTests/Python/on_a_terminal.py"
        let coexistctl = ProductProcess.productsDirectory + "/coexistctl"
        func prune(answering answer: String) throws -> (status: Int, output: String) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", script, answer, coexistctl, "history", "prune", path, "--before", "100"]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            let lines = text.split(separator: "\n", maxSplits: 1)
            return (Int(lines.first.map(String.init) ?? "") ?? -1, lines.count > 1 ? String(lines[1]) : "")
        }
        func oldest() throws -> Int64 {
            try Connection(path: path, options: .readOnly).scalar("SELECT min(Z_PK) FROM ATRANSACTION").integerValue
                ?? 0
        }
        let first = try oldest()
        let declined = try prune(answering: "n")
        #expect(declined.status == 1 && declined.output.contains("nothing deleted"), "\(declined)")
        #expect(try oldest() == first)
        let accepted = try prune(answering: "y")
        #expect(accepted.status == 0 && accepted.output.contains("oldest token now 100"), "\(accepted)")
        #expect(try oldest() == 100)
    }

    /// The human listing gives local times (the JSON one UTC) and lines its columns up across sides; a
    /// transaction shown names its objects in one notation whichever side wrote it.
    @Test func humanOutputIsInLocalTimeAlignedInOneNotation() throws {
        let fixture = try EventFixture()
        let path = fixture.shared.legacy.path
        let token = try fixture.legacyInsert("one")
        let waited = try ProductProcess.run("coexistctl", ["wait", String(token), "--socket", fixture.daemon.socket])
        #expect(waited.status == 0, "\(waited.stderr)")
        // history show names objects as tail does: entity, identity, (Z_PK n), from whichever side wrote.
        let legacy = try ProductProcess.run("coexistctl", ["history", "show", path, String(token)])
        #expect(legacy.stdout.contains(/legacy insert Task [0-9a-f-]{36} \(Z_PK [0-9]+\)/), "\(legacy.stdout)")
        let mirror = try ProductProcess.run("coexistctl", ["history", "show", path, String(token + 1)])
        #expect(mirror.stdout.contains(/new insert Task [0-9a-f-]{36} \(Z_PK [0-9]+\)/), "\(mirror.stdout)")
        var environment = ProcessInfo.processInfo.environment
        environment["TZ"] = "Asia/Tokyo"  // UTC+9, no daylight saving time
        let human = try ProductProcess.run("coexistctl", ["history", "list", path], environment: environment)
        let json = try ProductProcess.run("coexistctl", ["history", "list", path, "--json"], environment: environment)
        #expect(human.status == 0 && json.status == 0, "\(human.stderr)\(json.stderr)")
        struct Listed: Decodable { var timestamp: String }
        let first = try JSONDecoder().decode(Listed.self, from: Data(json.stdout.split(separator: "\n")[0].utf8))
        let utc = try #require(ISO8601DateFormatter().date(from: String(first.timestamp.prefix(19)) + "Z"))
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        formatter.timeZone = TimeZone(identifier: "Asia/Tokyo")
        let lines = human.stdout.split(separator: "\n").map(String.init)
        #expect(
            lines.first?.contains("  \(formatter.string(from: utc))+09:00  ") == true,
            "\(lines) vs \(first.timestamp)"
        )
        // A time copied from the listing means the same instant to --before (its offset is in it).
        let shown = try #require(lines.first?.firstMatch(of: /\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\+09:00/)?.0)
        let before = try ProductProcess.run(
            "coexistctl",
            ["history", "list", path, "--before", String(shown)],
            environment: environment
        )
        #expect(before.status == 0 && before.stdout.isEmpty, "nothing was saved before the first: \(before.stdout)")
        // The author column starts at one place whatever the side.
        let columns = Set(
            lines.compactMap { line in
                line.range(of: "author=").map { line.distance(from: line.startIndex, to: $0.lowerBound) }
            }
        )
        #expect(lines.count >= 2 && columns.count == 1, "\(lines)")
    }

    /// Bad filter values are usage errors naming what is wrong.
    @Test func badFiltersAreUsageErrors() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.copy(Fixtures.sampleModelV1)
        for (arguments, message) in [
            (["--entity", "Nope"], "no entity \"Nope\""), (["--type", "upsert"], "--type is insert, update or delete"),
            (["--after", "yesterday"], "--after takes an ISO-8601 time"),
            (["--before", "2025-02-30"], "--before takes"),
            (["--side", "old"], "--side is legacy or new"), (["--after", "99999999999999w"], "too large"),
        ] {
            let result = try ProductProcess.run("coexistctl", ["history", "list", path] + arguments)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
    }

    /// A durable consumer holds the cut back, and the dry run says so; `--ignore-consumers` cuts past it
    /// (it then gets token_expired), and `consumers reset` brings it back.
    @Test func consumersHoldPruningBackAndCanBeReset() throws {
        let fixture = try EventFixture()
        let path = fixture.shared.legacy.path
        var tokens: [Int64] = []
        for index in 0..<10 { tokens.append(try fixture.legacyInsert("t\(index)")) }
        _ = try fixture.durableConsumer("reports", acking: tokens[2])
        try fixture.waitUntilCaughtUp()
        let dry = try ProductProcess.run(
            "coexistctl",
            ["history", "prune", path, "--before", "\(tokens[8])", "--dry-run", "--json"]
        )
        #expect(dry.status == 0, "\(dry.stderr)")
        let plan = try JSONSerialization.jsonObject(with: Data(dry.stdout.utf8)) as? [String: Any] ?? [:]
        #expect(Int64(plan["through"] as? Int ?? 0) == tokens[2], "\(plan)")
        #expect((plan["heldBackBy"] as? [String])?.first?.hasPrefix("consumer reports") == true, "\(plan)")
        #expect(plan["dryRun"] as? Bool == true)
        let text = try ProductProcess.run(
            "coexistctl",
            ["history", "prune", path, "--before", "\(tokens[8])", "--dry-run"]
        )
        #expect(text.stdout.contains("held back by consumer reports (acknowledged \(tokens[2]))"), "\(text.stdout)")
        let oldest = try Connection(path: path, options: .readOnly).scalar("SELECT min(Z_PK) FROM ATRANSACTION")
        #expect(oldest.integerValue ?? 0 <= tokens[0], "the dry run deleted something")

        let cut = try ProductProcess.run(
            "coexistctl",
            ["history", "prune", path, "--before", "\(tokens[8])", "--ignore-consumers", "--yes", "--json"]
        )
        #expect(cut.status == 0, "\(cut.stderr)")
        let done = try JSONSerialization.jsonObject(with: Data(cut.stdout.utf8)) as? [String: Any] ?? [:]
        #expect(Int64(done["oldestToken"] as? Int ?? 0) == tokens[8], "\(done)")
        let expired = try fixture.client().request(#"{"op":"subscribe","name":"reports"}"#)
        #expect(expired["code"] as? String == "token_expired", "\(expired)")
        let listed = try ProductProcess.run("coexistctl", ["consumers", "list", path, "--json"])
        #expect(listed.stdout.contains(#""name":"reports""#) && listed.stdout.contains(#""resumable":false"#))

        let future = try ProductProcess.run("coexistctl", ["consumers", "reset", path, "reports", "--to", "999999"])
        #expect(future.status == 64 && future.stderr.contains("after the last token"), "\(future.stderr)")
        let early = try ProductProcess.run("coexistctl", ["consumers", "reset", path, "reports", "--to", "1"])
        #expect(early.status == 64 && early.stderr.contains("was pruned"), "\(early.stderr)")
        let reset = try ProductProcess.run("coexistctl", ["consumers", "reset", path, "reports", "--to", "oldest"])
        #expect(reset.status == 0, "\(reset.stderr)")
        let resumed = try fixture.client()
        resumed.send(#"{"op":"subscribe","name":"reports"}"# + "\n")
        let messages = try fixture.collect(resumed) { $0["type"] as? String == "end_of_backlog" }
        #expect(messages.first?["type"] as? String == "subscribed", "\(messages.first ?? [:])")
        #expect(messages.contains { $0["type"] as? String == "event" && Int64($0["token"] as? Int ?? 0) == tokens[8] })
        #expect(try ProductProcess.run("coexistctl", ["consumers", "drop", path, "reports"]).status == 0)
        #expect(try ProductProcess.run("coexistctl", ["consumers", "drop", path, "reports"]).status == 65)
    }
}

/// `coexistctl parked` and `conflicts` on a store whose legacy side gave ten objects the id of another.
@Suite struct ParkedCommandTests {
    @Test func parkedObjectsAreListedRetriedAndDropped() throws {
        let directory = try TemporaryDirectory()
        let shared = try SharedStore.create(in: directory)
        let path = shared.legacy.path
        var twins: [ObjectID] = []
        try shared.legacy.save(SaveMetadata(author: "old-app")) { save in
            for index in 0..<30 {
                let id = try save.insert(
                    "Task",
                    ["id": DemoStore.uuid(UInt8(index % 20)), "title": .string("t\(index)"), "createdAt": .date(0)]
                )
                if index >= 20 { twins.append(id) }
            }
        }
        let daemon = try DaemonProcess(database: path, directory: directory)
        try daemon.waitUntilServing()
        let served = try ProductProcess.run("coexistctl", ["parked", "retry", path])
        #expect(served.status == 75 && served.stderr.contains("serves"), "\(served.stderr)")
        #expect(daemon.stop() == 0)

        func listed() throws -> [[String: Any]] {
            let result = try ProductProcess.run("coexistctl", ["parked", "list", path, "--json"])
            #expect(result.status == 0, "\(result.stderr)")
            let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
            return object?["parked"] as? [[String: Any]] ?? []
        }
        let parked = try listed()
        #expect(parked.count == 10, "\(parked)")
        #expect(Set(parked.compactMap { ($0["pk"] as? Int).map(Int64.init) }) == Set(twins.map(\.pk)), "\(parked)")
        #expect(parked.allSatisfy { $0["kind"] as? String == "object" && $0["side"] as? String == "legacy" })

        // Five twins get ids of their own (with the daemon stopped): a retry mirrors them.
        try shared.legacy.save(SaveMetadata(author: "old-app")) { save in
            for (index, twin) in twins.prefix(5).enumerated() {
                try save.update(twin, ["id": DemoStore.uuid(UInt8(100 + index))])
            }
        }
        let retry = try ProductProcess.run("coexistctl", ["parked", "retry", path, "--json"])
        #expect(retry.status == 1, "five stay parked: \(retry.stdout) \(retry.stderr)")
        #expect(retry.stdout.contains(#""parked":5"#), "\(retry.stdout)")
        #expect(try listed().count == 5)
        let one = twins[7]
        // The human list names each as tail does, with what `drop --object` takes for it.
        let human = try ProductProcess.run("coexistctl", ["parked", "list", path])
        #expect(
            human.stdout.contains("legacy Task (Z_PK \(one.pk))  [--object legacy/Task/\(one.pk)]  since "),
            "\(human.stdout)"
        )
        let drop = try ProductProcess.run("coexistctl", ["parked", "drop", path, "--object", "legacy/Task/\(one.pk)"])
        #expect(drop.status == 0, "\(drop.stderr)")
        #expect(try listed().count == 4)
        let again = try ProductProcess.run("coexistctl", ["parked", "drop", path, "--object", "legacy/Task/\(one.pk)"])
        #expect(again.status == 65)
        #expect(try ProductProcess.run("coexistctl", ["parked", "drop", path, "--all"]).status == 0)
        #expect(try listed().isEmpty)
        let conflicts = try ProductProcess.run("coexistctl", ["conflicts", "list", path])
        #expect(conflicts.status == 0 && conflicts.stdout.contains("no conflicts"), "\(conflicts.stdout)")
        let verify = try ProductProcess.run("coexistctl", ["verify", path])
        #expect(verify.stdout.contains("5 differences"), "the dropped twins differ: \(verify.stdout)")
    }
}

/// `history export` → `history import` into a fresh store of the same model → `history export`: the same
/// bytes, and the imported store passes `integrity_check`.
@Suite struct HistoryArchiveTests {
    /// `fresh`: a store of the same model with no history (made from the model, or a scratch copy).
    static func roundTrip(_ path: String, into fresh: String, in directory: TemporaryDirectory) throws {
        let first = directory.file("first.ndjson")
        let export = try ProductProcess.run("coexistctl", ["history", "export", path, "--output", first])
        #expect(export.status == 0, "\(export.stderr)")
        let imported = try ProductProcess.run("coexistctl", ["history", "import", first, "--into", fresh])
        #expect(imported.status == 0, "\(imported.stderr)")
        let second = directory.file("second.ndjson")
        #expect(try ProductProcess.run("coexistctl", ["history", "export", fresh, "--output", second]).status == 0)
        let a = try #require(FileManager.default.contents(atPath: first))
        let b = try #require(FileManager.default.contents(atPath: second))
        #expect(!a.isEmpty)
        #expect(a == b, "the second export differs from the first")
        let check = try Connection(path: fresh, options: .readOnly).scalar("PRAGMA integrity_check")
        #expect(check == .text("ok"))
        // Importing the same file again: its tokens are taken now, so it is refused, naming file and line.
        let again = try ProductProcess.run("coexistctl", ["history", "import", first, "--into", fresh])
        #expect(again.status == 65 && again.stderr.contains("first.ndjson:1:"), "\(again.stderr)")
        // An export never overwrites a file.
        let over = try ProductProcess.run("coexistctl", ["history", "export", fresh, "--output", second])
        #expect(over.status == 73 && over.stderr.contains("second.ndjson"), "\(over.status) \(over.stderr)")
    }

    /// Real Core Data histories (updates with ZCOLUMNS, deletes with tombstones), imported into a scratch
    /// copy of the same store whose history was emptied.
    @Test(arguments: [Fixtures.photos, Fixtures.sampleModel2V1])
    func coreDataHistoryRoundTrips(store: String) throws {
        let directory = try TemporaryDirectory()
        let path = try directory.copy(store)
        let fresh = try directory.copy(store, as: "Fresh.sqlite")
        try Connection(path: fresh).execute(
            """
            DELETE FROM ACHANGE; DELETE FROM ATRANSACTION; DELETE FROM ATRANSACTIONSTRING;
            UPDATE Z_PRIMARYKEY SET Z_MAX = 0 WHERE Z_ENT BETWEEN 16001 AND 16003
            """
        )
        try Self.roundTrip(path, into: fresh, in: directory)
    }

    /// A bridged store: legacy saves, their mirrors, and new-side saves recorded in `coexist_change`.
    @Test func bridgedHistoryRoundTrips() throws {
        let directory = try TemporaryDirectory()
        let (path, tasks) = try RepairTests.bridgedStore(directory)
        let shared = try LegacyStore(path: path, options: OpenOptions())
        try shared.save(SaveMetadata(author: "old-app")) { save in
            try save.update(tasks[0], ["title": .string("renamed")])
            try save.delete(tasks[1])
        }
        try RepairTests.mirrorOnce(path, directory)
        let store = try ProductProcess.run("coexistctl", ["history", "list", path, "--side", "new"])
        #expect(!store.stdout.isEmpty, "no new-side transaction to export")
        let fresh = directory.file("Fresh.sqlite")
        let create = try ProductProcess.run("coexistctl", ["create", fresh, "--model", Fixtures.demoModel])
        #expect(create.status == 0, "\(create.stderr)")
        try Self.roundTrip(path, into: fresh, in: directory)
    }

    /// Tokens beyond what a store can count are refused naming the line, never trapping; so is a change of
    /// an entity the store does not have.
    @Test func outOfRangeTokensAndUnknownEntitiesAreRefused() throws {
        let directory = try TemporaryDirectory()
        let fresh = directory.file("Fresh.sqlite")
        #expect(try ProductProcess.run("coexistctl", ["create", fresh, "--model", Fixtures.demoModel]).status == 0)
        for (index, line) in [
            #"{"changes":[],"side":"legacy","time":1,"timestamp":"x","token":9223372036854775807}"#,
            #"{"changes":[],"side":"legacy","time":1,"timestamp":"x","token":9223372036854775806}"#,
            #"{"changes":[{"entity":"Nope","pk":1,"side":"legacy","tombstone":{},"type":"insert"}],"side":"legacy","time":1,"timestamp":"x","token":3}"#,
        ].enumerated() {
            let input = try directory.write("in\(index).ndjson", Array((line + "\n").utf8))
            let result = try ProductProcess.run("coexistctl", ["history", "import", input, "--into", fresh])
            #expect(result.status == 65 && result.stderr.contains("in\(index).ndjson:1:"), "\(line): \(result.stderr)")
        }
        let max = try Connection(path: fresh, options: .readOnly).scalar(
            "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = 16002"
        )
        #expect(max == .integer(0))
    }

    /// A line that is not an archived transaction is refused with its file and line; nothing is imported.
    @Test func aBadLineIsRefusedWhole() throws {
        let directory = try TemporaryDirectory()
        let fresh = directory.file("Fresh.sqlite")
        #expect(try ProductProcess.run("coexistctl", ["create", fresh, "--model", Fixtures.demoModel]).status == 0)
        let good = #"{"changes":[],"side":"legacy","time":1,"timestamp":"x","token":5}"#
        let input = try directory.write("bad.ndjson", Array((good + "\n{\"token\":\"six\"}\n").utf8))
        let result = try ProductProcess.run("coexistctl", ["history", "import", input, "--into", fresh])
        #expect(result.status == 65 && result.stderr.contains("bad.ndjson:2:"), "\(result.stderr)")
        let count = try Connection(path: fresh, options: .readOnly).scalar("SELECT count(*) FROM ATRANSACTION")
        #expect(count == .integer(0))
    }
}
