import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistSQLite
import CoexistStore
import Foundation
import TestSupport
import Testing

/// A daemon on a fresh shared demo store.
struct EventFixture {
    let directory: TemporaryDirectory
    let shared: SharedStore
    let daemon: DaemonProcess

    /// `prepare` runs on the store (in `directory`) before coexistd starts, with `environment` added to its own.
    init(
        options: [String] = [],
        environment: [String: String] = [:],
        prepare: (SharedStore, TemporaryDirectory) throws -> Void = { _, _ in }
    ) throws {
        directory = try TemporaryDirectory()
        shared = try SharedStore.create(in: directory)
        try prepare(shared, directory)
        daemon = try DaemonProcess(
            database: shared.legacy.path,
            directory: directory,
            options: options,
            environment: environment
        )
        try daemon.waitUntilServing()
    }

    /// A fixture over a store of the model `xml` (written as `Model.contents`).
    init(modelXML xml: String) throws {
        directory = try TemporaryDirectory()
        let file = try directory.write("Model.contents", Array(xml.utf8))
        let model = try XCDataModelReader.read(path: file)
        let legacy = try StoreCreator.create(path: directory.file("Model.sqlite"), model: model)
        let new = try NewStore(path: legacy.path, model: model)
        try new.createSchema()
        shared = SharedStore(legacy: legacy, new: new)
        daemon = try DaemonProcess(database: legacy.path, directory: directory, options: ["--model", file])
        try daemon.waitUntilServing()
    }

    /// A fixture over a store of ``LibraryModel`` (ordered to-manys, a many-to-many) instead of the demo's.
    init(library: Void) throws {
        directory = try TemporaryDirectory()
        shared = try SharedStore.createLibrary(in: directory)
        daemon = try DaemonProcess(
            database: shared.legacy.path,
            directory: directory,
            options: ["--model", directory.file("Library.contents")]
        )
        try daemon.waitUntilServing()
    }

    func client() throws -> SocketClient { try SocketClient(path: daemon.socket) }

    func legacyInsert(_ title: String) throws -> Int64 {
        try shared.legacy.save(SaveMetadata(author: "old-app")) { save in
            try save.insert(
                "Task",
                [
                    "id": .uuid((0..<16).map { _ in UInt8.random(in: 0...255) }), "title": .string(title),
                    "createdAt": .date(0),
                ]
            )
        }.token ?? 0
    }

    /// Subscribes durable consumer `name` from the start, reads its backlog and acknowledges `token`.
    func durableConsumer(_ name: String, acking token: Int64) throws -> SocketClient {
        let consumer = try client()
        consumer.send(#"{"op":"subscribe","name":"\#(name)","since":0}"# + "\n")
        _ = try collect(consumer) { $0["type"] as? String == "end_of_backlog" }
        consumer.send(#"{"op":"ack","token":\#(token)}"# + "\n")
        _ = try collect(consumer) { $0["type"] as? String == "acked" }
        return consumer
    }

    /// Waits (up to 4 s) until coexistd reports no lag: everything committed is mirrored.
    func waitUntilCaughtUp() throws {
        let status = try client()
        for _ in 0..<200 {
            if (try status.request(#"{"op":"status"}"#)["lag"] as? Int) == 0 { return }
            usleep(20_000)
        }
        Issue.record("coexistd did not catch up")
    }

    /// Reads messages until `stop` says so or `timeout` passes.
    func collect(
        _ client: SocketClient,
        timeout: Double = 20,
        until stop: ([String: Any]) -> Bool
    ) throws -> [[String: Any]] {
        var messages: [[String: Any]] = []
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline, let line = client.readLine() {
            guard let message = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                continue
            }
            messages.append(message)
            if stop(message) { break }
        }
        return messages
    }
}

@Suite(.serialized) struct EventTests {
    /// A writer commits continuously; a subscriber connects with `since` in the past: the tokens it
    /// receives are exactly the committed ones, in order, with no gap and no duplicate across the
    /// backlog→live switch. Twenty repetitions.
    @Test func noGapNoDuplicateAcrossTheSwitch() throws {
        let fixture = try EventFixture()
        for repetition in 0..<20 {
            let writer = Process()
            writer.executableURL = URL(fileURLWithPath: ProductProcess.productsDirectory + "/coexist-test-helper")
            writer.arguments = ["legacy-writer", fixture.shared.legacy.path, "40", "writer\(repetition)"]
            writer.standardOutput = FileHandle.nullDevice
            try writer.run()
            usleep(UInt32.random(in: 0...20_000))
            let since =
                max(
                    0,
                    try fixture.shared.legacy.connection.scalar("SELECT max(Z_PK) FROM ATRANSACTION").integerValue ?? 0
                ) - 5
            let client = try fixture.client()
            client.send(#"{"op":"subscribe","since":\#(max(0, since)),"authors":["writer\#(repetition)"]}"# + "\n")
            writer.waitUntilExit()
            let committed = try fixture.shared.legacy.connection.rows(
                """
                SELECT t.Z_PK FROM ATRANSACTION t JOIN ATRANSACTIONSTRING s ON s.Z_PK = t.ZAUTHORTS
                WHERE s.ZNAME = ? AND t.Z_PK > ? ORDER BY t.Z_PK
                """,
                [.text("writer\(repetition)"), .integer(max(0, since))]
            ).compactMap { $0[0].integerValue }
            guard let last = committed.last else { continue }
            var sawLast = false
            var sawEnd = false
            let messages = try fixture.collect(client) { message in
                if message["type"] as? String == "end_of_backlog" { sawEnd = true }
                if message["type"] as? String == "event", Int64(message["token"] as? Int ?? 0) >= last {
                    sawLast = true
                }
                return sawLast && sawEnd
            }
            let events = messages.filter { $0["type"] as? String == "event" }
            let pairs = events.map { "\($0["token"] ?? "")/\($0["index"] ?? "")" }
            #expect(Set(pairs).count == pairs.count, "no duplicate (repetition \(repetition))")
            var tokens: [Int64] = []
            for event in events {
                let token = Int64(event["token"] as? Int ?? 0)
                if tokens.last != token { tokens.append(token) }
            }
            #expect(tokens == committed, "exactly the committed tokens, in order (repetition \(repetition))")
            #expect(messages.contains { $0["type"] as? String == "end_of_backlog" })
        }
    }

    /// One subscriber stops reading: the others keep receiving; the slow one gets `lagged` and resumes
    /// from its last delivered token without losing anything.
    @Test func aSlowSubscriberLagsAloneAndResumes() throws {
        let fixture = try EventFixture(options: ["--queue-limit", "20"])
        let slow = try fixture.client()
        slow.send(#"{"op":"subscribe","since":"now","values":true}"# + "\n")
        _ = slow.readLine()  // subscribed
        let fast = try fixture.client()
        #expect(try fast.request(#"{"op":"subscribe","since":"now"}"#)["type"] as? String == "subscribed")
        #expect(fast.readLine()?.contains("end_of_backlog") == true)
        var tokens: [Int64] = []
        let fastEvents = TokenLog()
        let reader = Thread {
            while let line = fast.readLine() {
                guard let message = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                    continue
                }
                if message["type"] as? String == "event" { fastEvents.append(Int64(message["token"] as? Int ?? 0)) }
                if fastEvents.count == 400 { return }
            }
        }
        reader.start()
        for index in 0..<400 {
            tokens.append(try fixture.legacyInsert("task \(index) " + String(repeating: "x", count: 2_000)))
        }
        for _ in 0..<500 where fastEvents.count < 400 { usleep(20_000) }
        #expect(fastEvents.tokens == tokens, "the reading subscriber got every event")
        let slowMessages = try fixture.collect(slow) { $0["type"] as? String == "lagged" }
        let lagged = try #require(slowMessages.last { $0["type"] as? String == "lagged" })
        let resumeFrom = Int64(lagged["token"] as? Int ?? -1)
        let receivedBefore = Set(
            slowMessages.filter { $0["type"] as? String == "event" }.map { Int64($0["token"] as? Int ?? 0) }
        )
        #expect(receivedBefore.allSatisfy { $0 <= resumeFrom })
        let resumed = try fixture.client()
        resumed.send(#"{"op":"subscribe","since":\#(resumeFrom)}"# + "\n")
        let rest = try fixture.collect(resumed) {
            $0["type"] as? String == "event" && Int64($0["token"] as? Int ?? 0) == tokens.last
        }
        let after = rest.filter { $0["type"] as? String == "event" }.map { Int64($0["token"] as? Int ?? 0) }
        #expect(Set(receivedBefore).union(after) == Set(tokens), "nothing lost")
        #expect(after.first == tokens.first { $0 > resumeFrom })
    }

    /// Transactions of several changes: a subscriber that takes them all (sent joined, one message per
    /// transaction) and one whose filter takes only some get exactly their events, in order, each with its
    /// place in the transaction; a third with the same filter as the first gets the same lines.
    @Test func multiChangeTransactionsReachEachFilterExactly() throws {
        let fixture = try EventFixture()
        var clients: [SocketClient] = []
        for request in [
            #"{"op":"subscribe","since":"now"}"#, #"{"op":"subscribe","since":"now","entities":["Task"]}"#,
            #"{"op":"subscribe","since":"now"}"#,
            // Sharing the second one's filter set, with values; and one whose filter takes one change each.
            #"{"op":"subscribe","since":"now","entities":["Task"],"values":true}"#,
            #"{"op":"subscribe","since":"now","entities":["Category"]}"#,
        ] {
            let client = try fixture.client()
            #expect(try client.request(request)["type"] as? String == "subscribed")
            #expect(client.readLine()?.contains("end_of_backlog") == true)
            clients.append(client)
        }
        var expectedAll: [String] = []
        var expectedTasks: [String] = []
        var expectedCategories: [String] = []
        for round in 0..<5 {
            let result = try fixture.shared.legacy.save(SaveMetadata(author: "old-app")) { save in
                _ = try save.insert("Category", ["id": DemoStore.uuid(UInt8(round + 1)), "name": .string("c\(round)")])
                for index in 0..<3 {
                    _ = try save.insert(
                        "Task",
                        [
                            "id": .uuid((0..<16).map { _ in UInt8.random(in: 0...255) }),
                            "title": .string("t\(round).\(index)"), "createdAt": .date(0),
                        ]
                    )
                }
            }
            let token = try #require(result.token)
            expectedAll += (0..<4).map { "\(token)/\($0)/4" }
            expectedTasks += (1..<4).map { "\(token)/\($0)/4" }
            expectedCategories.append("\(token)/0/4")
        }
        func readEvents(_ client: SocketClient, _ count: Int) throws -> [String] {
            var seen: [String] = []
            let messages = try fixture.collect(client) { message in
                if message["type"] as? String == "event" {
                    let token = message["token"] as? Int ?? 0
                    seen.append("\(token)/\(message["index"] as? Int ?? -1)/\(message["count"] as? Int ?? -1)")
                }
                return seen.count == count
            }
            #expect(!messages.isEmpty)
            return seen
        }
        #expect(try readEvents(clients[0], 20) == expectedAll)
        #expect(try readEvents(clients[1], 15) == expectedTasks)
        #expect(try readEvents(clients[2], 20) == expectedAll)
        #expect(try readEvents(clients[3], 15) == expectedTasks)
        #expect(try readEvents(clients[4], 5) == expectedCategories)
    }

    /// Pruning keeps what a durable consumer has not acknowledged; a pruned token gets token_expired.
    @Test func pruningRespectsDurableConsumers() throws {
        let fixture = try EventFixture()
        var tokens: [Int64] = []
        for index in 0..<10 { tokens.append(try fixture.legacyInsert("t\(index)")) }
        _ = try fixture.durableConsumer("reports", acking: tokens[2])
        try fixture.waitUntilCaughtUp()
        let prune = try ProductProcess.run(
            "coexistctl",
            ["history", "prune", fixture.shared.legacy.path, "--before", "\(tokens[8])"]
        )
        #expect(prune.status == 0, "\(prune.stderr)")
        #expect(prune.stdout.contains("oldest token now \(tokens[2] + 1)"), "\(prune.stdout)")
        let late = try fixture.client()
        let expired = try late.request(#"{"op":"subscribe","since":1}"#)
        #expect(expired["code"] as? String == "token_expired")
        #expect(Int64(expired["oldest"] as? Int ?? 0) == tokens[2] + 1)
        let resumed = try fixture.client()
        resumed.send(#"{"op":"subscribe","name":"reports"}"# + "\n")
        let messages = try fixture.collect(resumed) { $0["type"] as? String == "end_of_backlog" }
        #expect(Int64(messages.first { $0["type"] as? String == "subscribed" }?["since"] as? Int ?? -1) == tokens[2])
        #expect(messages.contains { $0["type"] as? String == "event" && Int64($0["token"] as? Int ?? 0) == tokens[3] })
    }

    /// A legacy write, then `wait` for its token: the reply comes only once the row is in the new schema.
    @Test func waitIsAReadYourWritesBarrier() throws {
        let fixture = try EventFixture()
        for index in 0..<5 {
            let token = try fixture.legacyInsert("barrier \(index)")
            let reply = try fixture.client().request(#"{"op":"wait","token":\#(token),"timeout":5000}"#)
            #expect(reply["type"] as? String == "waited")
            let rows = try Connection(path: fixture.shared.legacy.path, options: .readOnly)
                .scalar("SELECT count(*) FROM task WHERE title = ?", [.text("barrier \(index)")])
            #expect(rows == .integer(1))
        }
        let timeout = try fixture.client().request(#"{"op":"wait","token":999999,"timeout":100}"#)
        #expect(timeout["code"] as? String == "timeout")
        let command = try ProductProcess.run("coexistctl", ["wait", "1", "--socket", fixture.daemon.socket])
        #expect(command.status == 0)
        // A sentence for a person, not the protocol's JSON.
        #expect(command.stdout.hasPrefix("mirrored through token 1 (cursor "), "\(command.stdout)")
        #expect(!command.stdout.contains("{"), "\(command.stdout)")
    }

    /// Out of descriptors: connections beyond the limit wait in the listen backlog while the daemon keeps
    /// serving its clients without spinning on the ready listener, and are served once others leave.
    @Test func runningOutOfDescriptorsIsSurvived() throws {
        let directory = try TemporaryDirectory()
        let shared = try SharedStore.create(in: directory)
        let daemon = try DaemonProcess(
            database: shared.legacy.path,
            directory: directory,
            options: ["--log-level", "warning"],
            openFilesLimit: 40
        )
        let first = try SocketClient(path: daemon.socket)
        #expect(try first.request(#"{"op":"ping"}"#)["type"] as? String == "pong")
        var crowd: [SocketClient] = []
        for _ in 0..<60 { crowd.append(try SocketClient(path: daemon.socket, timeout: 2)) }
        usleep(300_000)
        let pid = daemon.process.processIdentifier
        let before = Self.cpuTicks(pid)
        sleep(1)
        let used = Self.cpuTicks(pid) - before
        #expect(used < 30, "coexistd used \(used) of 100 CPU ticks in a second while out of descriptors")
        guard daemon.process.isRunning else {
            let log = daemon.log
            Issue.record("coexistd exited (\(daemon.process.terminationStatus)): \(log)")
            return
        }
        #expect(try first.request(#"{"op":"ping"}"#)["type"] as? String == "pong")
        crowd.removeAll()
        let late = try SocketClient(path: daemon.socket)
        #expect(try late.request(#"{"op":"ping"}"#)["type"] as? String == "pong")
        let status = daemon.stop()
        let log = daemon.log
        #expect(status == 0, "\(log)")
        if !FileManager.default.fileExists(atPath: "/run/systemd/journal/socket") {
            #expect(log.contains("cannot accept connections"), "\(log)")
            #expect(log.contains("open-files limit (40)"), "\(log)")
        }
    }

    /// utime + stime of `pid`, in clock ticks.
    static func cpuTicks(_ pid: Int32) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let end = text.lastIndex(of: ")")
        else { return 0 }
        let fields = text[text.index(after: end)...].split(separator: " ")
        return (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0)
    }

    /// Garbage of every kind, oversized lines and 1,000 connect/disconnect cycles leave the daemon and the
    /// other subscribers unaffected.
    @Test func hostileClientsDoNotHurtOthers() throws {
        let fixture = try EventFixture(options: ["--max-line-length", "1024"])
        let watcher = try fixture.client()
        watcher.send(#"{"op":"subscribe","since":"now"}"# + "\n")
        _ = watcher.readLine()
        let garbage = try fixture.client()
        #expect(try garbage.request("{not json")["code"] as? String == "invalid_json")
        #expect(try garbage.request(#"{"op":"frobnicate"}"#)["code"] as? String == "unknown_op")
        #expect(try garbage.request(#"{"op":"subscribe","since":"yesterday"}"#)["code"] as? String == "invalid_request")
        #expect(try garbage.request(#"{"op":"subscribe","entities":["Nope"]}"#)["code"] as? String == "unknown_entity")
        let utf8 = try fixture.client()
        utf8.send("{\"op\":\"ping\"}\u{FFFD}")
        var bytes: [UInt8] = [0x7B, 0xFF, 0xFE, 0x7D, 0x0A]
        _ = bytes.withUnsafeMutableBytes { raw in
            send(utf8.rawDescriptor, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL))
        }
        #expect(utf8.readLine()?.contains("invalid_utf8") == true)
        let big = try fixture.client()
        big.send(String(repeating: "a", count: 5_000))
        #expect(big.readLine()?.contains("line_too_long") == true)
        #expect(big.readLine() == nil, "closed after an oversized line")
        for _ in 0..<1_000 { _ = try fixture.client() }
        let token = try fixture.legacyInsert("still here")
        let seen = try fixture.collect(watcher) { $0["type"] as? String == "event" }
        #expect(Int64(seen.last?["token"] as? Int ?? 0) == token)
        #expect(try fixture.client().request(#"{"op":"ping"}"#)["type"] as? String == "pong")
    }

    /// A peer outside the SO_PEERCRED allowlist is refused.
    @Test func peersOutsideTheAllowlistAreRefused() throws {
        let fixture = try EventFixture(options: ["--allow-uids", "4242", "--allow-gids", "4242"])
        let client = try fixture.client()
        #expect(client.readLine()?.contains("forbidden") == true)
        #expect(client.readLine() == nil)
    }

    /// The Python client in the test suite subscribes, receives and acknowledges events.
    /// The Python client speaks protocol 2 (ids echoed, transaction framing) and, with `--protocol 1`, as a
    /// version-1 client: both get every change once, in order, and their acknowledgements are kept.
    @Test(arguments: ["2", "1"]) func pythonClient(protocolVersion: String) throws {
        let fixture = try EventFixture()
        let script = Fixtures.repository + "/Tests/EndToEndTests/Python/coexist_client.py"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", script, fixture.daemon.socket, "0", "3", "python-consumer", "--protocol", protocolVersion,
        ]
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        var tokens: [Int64] = []
        for index in 0..<3 { tokens.append(try fixture.legacyInsert("py \(index)")) }
        process.waitUntilExit()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let problems = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 0, "\(problems)")
        #expect(text.split(separator: "\n").compactMap { Int64($0.split(separator: " ").first ?? "") } == tokens)
        #expect(text.contains("legacy Task insert"))
        // The daemon reads the last acknowledgements as they arrive, shortly after the client exits.
        var acked: Int64 = 0
        let connection = try Connection(path: fixture.shared.legacy.path, options: .readOnly)
        for _ in 0..<100 where acked < tokens[2] {
            acked =
                try connection.scalar("SELECT acked FROM coexist_consumer WHERE name = 'python-consumer'").integerValue
                ?? 0
            usleep(20_000)
        }
        #expect(acked == tokens[2])
    }

    @Test func tailAndStatusCommands() throws {
        let fixture = try EventFixture()
        let token = try fixture.legacyInsert("tailed")
        let tail = try ProductProcess.run(
            "coexistctl",
            ["tail", "--since", "0", "--count", "1", "--socket", fixture.daemon.socket]
        )
        #expect(tail.status == 0)
        // Local time, token, side, author, change, object (entity, identity, Z_PK), properties.
        let line =
            #/^\d{2}:\d{2}:\d{2}\.\d{3} +(\d+)  legacy   old-app       insert  Task [0-9A-Fa-f-]{36} \(Z_PK \d+\)/#
        #expect(tail.stdout.firstMatch(of: line)?.1 == Substring(String(token)), "\(tail.stdout)")
        let values = try ProductProcess.run(
            "coexistctl",
            ["tail", "--since", "0", "--count", "1", "--values", "--socket", fixture.daemon.socket]
        )
        #expect(
            values.stdout.contains(#"{category: null, createdAt: "2001-01-01T00:00:00.000000Z""#),
            "\(values.stdout)"
        )
        #expect(values.stdout.hasSuffix("…\n"), "cut to fit: \(values.stdout)")
        let json = try ProductProcess.run(
            "coexistctl",
            ["tail", "--since", "0", "--count", "1", "--json", "--socket", fixture.daemon.socket]
        )
        #expect(json.stdout.contains("\"type\":\"event\""))
        let status = try ProductProcess.run("coexistctl", ["status", "--socket", fixture.daemon.socket])
        #expect(status.status == 0)
        #expect(status.stdout.contains("cursor"))
        // The rate rounded for a person (at most two decimals), not a raw double.
        let rate = status.stdout.firstMatch(of: /, ([0-9.]+) tx\/s/)?.1 ?? ""
        #expect(!rate.isEmpty && (rate.split(separator: ".").dropFirst().first?.count ?? 0) <= 2, "\(status.stdout)")
    }
}

/// Tokens collected by a reader thread.
final class TokenLog: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Int64] = []

    func append(_ token: Int64) { lock.withLock { values.append(token) } }
    var count: Int { lock.withLock { values.count } }
    var tokens: [Int64] { lock.withLock { values } }
}
