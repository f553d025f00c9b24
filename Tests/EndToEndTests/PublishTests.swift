import CoexistHistory
import CoexistLegacyStore
import CoexistPublish
import CoexistRuntime
import CoexistStore
import Foundation
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// coexistd publishing to a real `nats-server -js`: every change once, in token order, across SIGKILLs and a
/// server outage; misconfiguration stops it at start with exit 78.
@Suite struct PublishTests {
    /// A store, a server and a configuration file publishing to stream `STREAM`.
    final class Fixture: @unchecked Sendable {
        let directory: TemporaryDirectory
        let shared: SharedStore
        /// The server started for the test (nil when it was given `urls`).
        let server: NatsServer?
        let url: String
        let config: String

        /// With `urls`, coexistd publishes to them; without, to a server started here.
        init(publish extra: String = "", urls: [String]? = nil) throws {
            directory = try TemporaryDirectory()
            shared = try SharedStore.create(in: directory)
            server = urls == nil ? try NatsServer() : nil
            url = server?.url ?? urls?.first ?? ""
            config = directory.file("coexistd.conf")
            try """
            [publish]
            nats-url = \((urls ?? [url]).joined(separator: ", "))
            stream = STREAM
            timeout = 1s
            \(extra)
            """.write(toFile: config, atomically: true, encoding: .utf8)
        }

        func daemon(_ options: [String] = []) throws -> DaemonProcess {
            try DaemonProcess(
                database: shared.legacy.path,
                directory: directory,
                options: ["--config", config] + options
            )
        }

        /// A legacy save inserting `count` tasks: its token.
        @discardableResult
        func legacySave(_ count: Int = 1, author: String = "old-app") throws -> Int64 {
            let result = try shared.legacy.save(SaveMetadata(author: author)) { save in
                for index in 0..<count {
                    var values = DemoStore.mandatoryValues(for: "Task", in: shared.legacy)
                    values["id"] = .uuid(withUnsafeBytes(of: UUID().uuid) { Array($0) })
                    values["title"] = .string("legacy \(index)")
                    _ = try save.insert("Task", values)
                }
            }
            return try #require(result.token)
        }

        /// A new-side save inserting one task: its token.
        @discardableResult
        func newSave() throws -> Int64 {
            let result = try shared.new.save(SaveMetadata(author: "new-app")) { save in
                _ = try save.insert("Task", id: nil, ["title": .string("new"), "createdAt": .date(0)])
            }
            return try #require(result.token)
        }

        /// Every message of the stream, in stream order, as (token, index, message id, payload).
        func messages(_ stream: JetStream) throws -> [(token: Int64, id: String, json: [String: Any])] {
            let (_, last) = try stream.state(of: "STREAM")
            guard last > 0 else { return [] }
            return try (1...last).map { sequence in
                let message = try stream.message(
                    "STREAM",
                    sequence: sequence,
                    headers: ["Coexist-Token", "Nats-Msg-Id"]
                )
                let json =
                    try JSONSerialization.jsonObject(with: Data(message.data)) as? [String: Any] ?? [:]
                return (Int64(message.headers["Coexist-Token"] ?? "") ?? -1, message.headers["Nats-Msg-Id"] ?? "", json)
            }
        }

        /// `coexistctl status --json`'s publish lag (nil when it cannot be read).
        func publishLag(_ daemon: DaemonProcess) throws -> Int? {
            let status = try ProductProcess.run("coexistctl", ["status", "--socket", daemon.socket, "--json"])
            let reply = try? JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
            return reply?["publishLag"] as? Int
        }

        /// Waits (up to two minutes) until the publish lag is 0.
        func waitForNoLag(_ daemon: DaemonProcess) throws -> Int? {
            let deadline = Date().addingTimeInterval(120)
            var lag = try publishLag(daemon)
            while lag != 0 && Date() < deadline {
                usleep(50_000)
                lag = try publishLag(daemon)
            }
            return lag
        }

        /// Waits until the stream holds `count` messages (up to `timeout` seconds).
        /// A request that fails meanwhile (a cluster electing a leader, a server restarting) is tried again.
        func waitForMessages(_ count: UInt64, _ stream: JetStream, timeout: Double = 120) throws -> UInt64 {
            let deadline = Date().addingTimeInterval(timeout)
            var messages: UInt64 = 0
            while Date() < deadline {
                messages = (try? stream.state(of: "STREAM").messages) ?? messages
                if messages >= count { break }
                usleep(50_000)
            }
            return messages
        }
    }

    /// Writers on both sides while coexistd publishes: the stream holds every change of theirs once, in token
    /// order (stream sequence and token agree), none of the bridge's mirrors, and `status` shows no lag.
    @Test func everyChangeOnceInTokenOrder() throws {
        let fixture = try Fixture()
        defer { fixture.server?.stop() }
        let daemon = try fixture.daemon()
        defer { _ = daemon.stop() }
        try daemon.waitUntilServing(timeout: 300)
        var expected: [Int64: Int] = [:]  // token → changes
        for round in 0..<10 {
            expected[try fixture.legacySave(2)] = 2
            expected[try fixture.newSave()] = 1
            if round % 3 == 0 { usleep(20_000) }
        }
        let stream = try JetStream(servers: [fixture.url], name: "test-reader")
        let total = UInt64(expected.values.reduce(0, +))
        #expect(try fixture.waitForMessages(total, stream) == total, "\(daemon.log)")
        // Published through the file's last token (the mirrors' too, which are skipped): anything more (a
        // mirror, a duplicate) would be in the stream now.
        #expect(try fixture.waitForNoLag(daemon) == 0)
        let messages = try fixture.messages(stream)
        #expect(messages.count == Int(total))
        // In token order, each change once, only the writers' transactions.
        #expect(messages.map(\.token) == messages.map(\.token).sorted())
        #expect(Set(messages.map(\.id)).count == messages.count)
        var perToken: [Int64: Int] = [:]
        for message in messages {
            perToken[message.token, default: 0] += 1
            #expect(message.json["token"] as? Int == Int(message.token))
            #expect(message.json["author"] as? String != "coexistd")
            #expect(message.json["type"] as? String == "event")
        }
        #expect(perToken == expected)
        let status = try ProductProcess.run("coexistctl", ["status", "--socket", daemon.socket, "--json"])
        let reply = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any] ?? [:]
        #expect(reply["publishPosition"] as? Int ?? 0 >= Int(expected.keys.max() ?? 0))
        let line = try ProductProcess.run("coexistctl", ["status", "--socket", daemon.socket])
        #expect(line.stdout.contains(", publish lag 0"), "\(line.stdout)")
        // The position is a durable consumer's: listed, and holding history back from pruning.
        let consumers = try ProductProcess.run("coexistctl", ["consumers", "list", fixture.shared.legacy.path])
        #expect(consumers.stdout.contains("coexist:publish:STREAM"), "\(consumers.stdout)")
    }

    /// Live commits are published from what the event service read and encoded for its subscribers: the
    /// publisher's thread reads no history page for them (it read every page it needed again, each
    /// invalidated by the commit, before it was handed the event service's encoding).
    @Test func liveCommitsArePublishedWithoutReadingTheHistoryAgain() throws {
        let fixture = try Fixture(publish: "values = true")
        defer { fixture.server?.stop() }
        // The publisher's own check of the history comes after 5 s without a wake-up.
        let daemon = try fixture.daemon(["--poll-interval", "5s"])
        defer { _ = daemon.stop() }
        try daemon.waitUntilServing(timeout: 300)
        // Past the start, which reads the history (the position is read from the file and the stream).
        var tokens = [try fixture.legacySave()]
        let stream = try JetStream(servers: [fixture.url], name: "test-reader")
        #expect(try fixture.waitForMessages(1, stream) == 1, "\(daemon.log)")
        usleep(300_000)
        let pid = daemon.process.processIdentifier
        let before = try Self.bytesRead(by: "coexist-publish", pid: pid)
        // New-side inserts too, published before the bridge mirrored them (their legacy `Z_PK` not known yet,
        // as live socket subscribers get them).
        for round in 0..<60 {
            tokens.append(try round % 3 == 2 ? fixture.newSave() : fixture.legacySave())
            usleep(20_000)
        }
        #expect(try fixture.waitForMessages(61, stream) == 61, "\(daemon.log)")
        let read = try Self.bytesRead(by: "coexist-publish", pid: pid) - before
        // Its wake-ups read 8 bytes each (520 bytes measured for 40 commits); reading the history for each
        // commit read more than a page per commit of this small store (204,800 bytes for 40).
        #expect(read < 20 * 4_096, "the publisher's thread read \(read) bytes for 60 commits")
        let messages = try fixture.messages(stream)
        #expect(messages.map(\.token) == tokens)
        #expect(
            messages.allSatisfy {
                ["legacy 0", "new"].contains(($0.json["values"] as? [String: Any])?["title"] as? String ?? "")
            }
        )
    }

    /// The bytes the daemon's thread called `thread` has read through system calls (`rchar`).
    static func bytesRead(by thread: String, pid: Int32) throws -> Int {
        let tasks = "/proc/\(pid)/task"
        for task in try FileManager.default.contentsOfDirectory(atPath: tasks) {
            let name = (try? String(contentsOfFile: "\(tasks)/\(task)/comm", encoding: .utf8)) ?? ""
            guard name.trimmingCharacters(in: .whitespacesAndNewlines) == thread else { continue }
            for line in try String(contentsOfFile: "\(tasks)/\(task)/io", encoding: .utf8).split(separator: "\n")
            where line.hasPrefix("rchar:") {
                if let count = Int(line.dropFirst(6).trimmingCharacters(in: .whitespaces)) { return count }
            }
        }
        throw CocoaError(.fileReadUnknown)
    }

    /// `framing = transaction` with values: one message per transaction, carrying every change with values.
    @Test func transactionsAsMessages() throws {
        let fixture = try Fixture(publish: "framing = transaction\nvalues = true")
        defer { fixture.server?.stop() }
        let daemon = try fixture.daemon()
        defer { _ = daemon.stop() }
        try daemon.waitUntilServing(timeout: 300)
        let first = try fixture.legacySave(3)
        let second = try fixture.newSave()
        let stream = try JetStream(servers: [fixture.url], name: "test-reader")
        #expect(try fixture.waitForMessages(2, stream) == 2, "\(daemon.log)")
        let messages = try fixture.messages(stream)
        #expect(messages.map(\.token) == [first, second])
        #expect(messages.map { $0.json["type"] as? String } == ["transaction", "transaction"])
        #expect(messages.map { ($0.json["changes"] as? [Any])?.count } == [3, 1])
        let change = (messages.first?.json["changes"] as? [[String: Any]])?.first
        #expect(
            (change?["values"] as? [String: Any])?["title"] as? String == "legacy 0",
            "\(messages.first?.json ?? [:])"
        )
        let store = try StoreMetadata.read(fixture.shared.legacy.connection).storeUUID
        #expect(messages.map(\.id) == messages.map { "\(store):\($0.token)" })
        // Read back by coexistctl: a line per change (the transactions' changes), or the messages as they are.
        let tail = try Self.coexistctl(["tail", "--nats", fixture.url, "--stream", "STREAM", "--count", "4"])
        #expect(tail.status == 0, "\(tail.stderr)")
        let lines = tail.stdout.split(separator: "\n")
        #expect(lines.count == 4 && lines.allSatisfy { $0.contains(" insert ") && $0.contains("Task ") }, "\(lines)")
        let after = try Self.coexistctl(
            ["tail", "--nats", fixture.url, "--stream", "STREAM", "--since", "\(first)", "--count", "1", "--json"]
        )
        #expect(after.stdout.hasPrefix(#"{"type":"transaction","token":\#(second),"#), "\(after.stdout)")
        let misuse = try Self.coexistctl(["tail", "--nats", fixture.url, "--follow"])
        #expect(misuse.status == 64)
    }

    /// coexistctl with `arguments`, killed after a minute (a tail that never ends is a failure, not a hang).
    static func coexistctl(_ arguments: [String]) throws -> ProductProcess.Result {
        try ProductProcess.run(
            path: "/usr/bin/timeout",
            ["-s", "KILL", "60", ProductProcess.productsDirectory + "/coexistctl"] + arguments
        )
    }

    /// SIGKILL coexistd again and again while a writer commits; after the last restart the stream holds every
    /// change exactly once, in order.
    @Test func sigkillDuringPublishingLosesAndDuplicatesNothing() throws {
        // A duplicate window shorter than each restart: what was published before the kill is found in the
        // stream itself, not dropped by the server's window.
        let fixture = try Fixture(publish: "duplicate-window = 1s")
        defer { fixture.server?.stop() }
        let writing = Atomic(true)
        let tokens = PthreadLocked<[Int64]>([])
        let writer = Thread {
            while writing.load(ordering: .relaxed) {
                if let token = try? fixture.legacySave(2) { tokens.withLock { $0.append(token) } }
                usleep(2_000)
            }
        }
        writer.start()
        defer {
            writing.store(false, ordering: .relaxed)
            while !writer.isFinished { usleep(10_000) }
        }
        let reader = try JetStream(servers: [fixture.url], name: "test-counter")
        var from: Int64?
        for round in 0..<5 {
            let daemon = try fixture.daemon()
            try daemon.waitUntilServing(timeout: 300)
            if round == 0 {
                // "publishing to stream STREAM from token P on": what is committed after P is expected.
                let line = daemon.log.split(separator: "\n").first { $0.contains("publishing to stream STREAM from") }
                let words = line?.split(separator: " ") ?? []
                if let index = words.firstIndex(of: "token"), index + 1 < words.count {
                    from = Int64(words[index + 1])
                }
            }
            // Killed once it has published more, at a moment that differs from round to round.
            let before = try reader.state(of: "STREAM").messages
            let deadline = Date().addingTimeInterval(120)
            while try reader.state(of: "STREAM").messages < before + 50 && Date() < deadline { usleep(5_000) }
            usleep(UInt32.random(in: 0...30_000))
            kill(daemon.process.processIdentifier, SIGKILL)
            daemon.process.waitUntilExit()
            usleep(1_200_000)
        }
        writing.store(false, ordering: .relaxed)
        while !writer.isFinished { usleep(10_000) }
        let daemon = try fixture.daemon()
        defer { _ = daemon.stop() }
        try daemon.waitUntilServing(timeout: 300)
        let written = tokens.withLock { $0 }
        let stream = try JetStream(servers: [fixture.url], name: "test-reader")
        // The first daemon starts publishing from the last token it saw: what was written before is not
        // expected; everything after is.
        let messages = try waitForLast(written.last ?? 0, stream, fixture)
        let start = try #require(from)
        let expected = written.filter { $0 > start }
        #expect(!expected.isEmpty)
        var perToken: [Int64: Int] = [:]
        for message in messages { perToken[message.token, default: 0] += 1 }
        #expect(Set(messages.map(\.id)).count == messages.count, "a change was published twice")
        #expect(messages.map(\.token) == messages.map(\.token).sorted())
        #expect(perToken == Dictionary(uniqueKeysWithValues: expected.map { ($0, 2) }), "\(daemon.log)")
    }

    /// The server stopped for 5 s while a writer commits: mirroring goes on, the lag shows, and once the server
    /// is back every change is published, once.
    @Test func aServerOutageLosesNothing() throws {
        let fixture = try Fixture()
        let daemon = try fixture.daemon(["--poll-interval", "5s"])
        defer { _ = daemon.stop() }
        try daemon.waitUntilServing(timeout: 300)
        var tokens = [try fixture.legacySave()]
        let stream = try JetStream(servers: [fixture.url], name: "test-reader")
        #expect(try fixture.waitForMessages(1, stream) == 1)
        fixture.server?.stop()
        let outage = Date()
        while Date().timeIntervalSince(outage) < 5 {
            tokens.append(try fixture.legacySave())
            usleep(250_000)
        }
        // Mirroring never stopped: the bridge is caught up while the server is away.
        let during = try ProductProcess.run(
            "coexistctl",
            ["wait", "\(tokens.last ?? 0)", "--socket", daemon.socket, "--timeout", "30000"]
        )
        #expect(during.status == 0, "\(during.stdout) \(during.stderr)")
        let status = try ProductProcess.run("coexistctl", ["status", "--socket", daemon.socket, "--json"])
        let reply = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any] ?? [:]
        let lagDuring = reply["publishLag"] as? Int ?? 0
        #expect(lagDuring > 0, "\(status.stdout)")
        // The lag grows with what is committed while the servers are away.
        tokens.append(try fixture.legacySave())
        let deadline = Date().addingTimeInterval(60)
        var lagLater = try fixture.publishLag(daemon) ?? 0
        while lagLater <= lagDuring && Date() < deadline {
            usleep(50_000)
            lagLater = try fixture.publishLag(daemon) ?? 0
        }
        #expect(lagLater > lagDuring)
        try fixture.server?.restart()
        defer { fixture.server?.stop() }
        let reader = try JetStream(servers: [fixture.url], name: "test-reader-2")
        let messages = try waitForLast(tokens.last ?? 0, reader, fixture)
        #expect(messages.map(\.token) == tokens, "\(daemon.log)")
        #expect(daemon.log.contains("publishing to stream STREAM failed (retrying)"), "\(daemon.log)")
        #expect(daemon.log.contains("publishing to stream STREAM works again"), "\(daemon.log)")
        #expect(try fixture.waitForNoLag(daemon) == 0)
        // Back to what the event service hands over: each commit is in the stream at once, not at the
        // publisher's next timeout (the poll interval, 5 s here).
        for _ in 0..<3 {
            let token = try fixture.legacySave()
            tokens.append(token)
            let committed = Date()
            let messages = try waitForLast(token, reader, fixture)
            #expect(messages.map(\.token) == tokens)
            #expect(Date().timeIntervalSince(committed) < 2, "token \(token) was published after the poll interval")
        }
    }

    /// The stream's last message gone (deleted, purged or expired) while coexistd is stopped: it starts again
    /// and goes on from its position, publishing nothing twice.
    @Test func aStreamWithoutItsLastMessageIsResumed() throws {
        let fixture = try Fixture()
        defer { fixture.server?.stop() }
        let first = try fixture.daemon()
        try first.waitUntilServing(timeout: 300)
        let tokens = [try fixture.legacySave(), try fixture.legacySave()]
        let stream = try JetStream(servers: [fixture.url], name: "test-reader")
        #expect(try fixture.waitForMessages(2, stream) == 2)
        #expect(try fixture.waitForNoLag(first) == 0)
        #expect(first.stop() == 0)
        try stream.deleteMessage("STREAM", sequence: 2)
        try stream.deleteMessage("STREAM", sequence: 1)
        let second = try fixture.daemon()
        defer { _ = second.stop() }
        try second.waitUntilServing(timeout: 300)
        let third = try fixture.legacySave()
        var messages: [(token: Int64, id: String, json: [String: Any])] = []
        let deadline = Date().addingTimeInterval(120)
        while messages.isEmpty && Date() < deadline {
            usleep(50_000)
            messages = (1...max(1, try stream.state(of: "STREAM").lastSequence)).compactMap { sequence in
                guard let message = try? stream.message("STREAM", sequence: sequence, headers: ["Coexist-Token"])
                else { return nil }
                return (Int64(message.headers["Coexist-Token"] ?? "") ?? -1, "", [:])
            }
        }
        #expect(messages.map(\.token) == [third], "\(second.log)")
        #expect(tokens.allSatisfy { $0 < third })
    }

    /// A three-node cluster with the stream on three replicas: the node coexistd publishes to (the first of
    /// its servers) is killed mid-stream; it goes on through another, and a consumer on a surviving node gets
    /// every change once, in order.
    @Test func aClusterNodeLostMidStream() throws {
        let cluster = try NatsCluster()
        defer { cluster.stop() }
        // The stream on three replicas once the cluster has elected its JetStream leader.
        let admin = try JetStream(servers: [cluster.urls[1]], name: "test-admin")
        let ready = Date().addingTimeInterval(120)
        var created = false
        while !created && Date() < ready {
            created = (try? admin.ensureStream("STREAM", subject: "coexist.*.*.*", replicas: 3)) != nil
            if !created { usleep(250_000) }
        }
        #expect(created, "\(cluster.nodes[0].log)")
        let fixture = try Fixture(publish: "replicas = 3", urls: cluster.urls)
        let daemon = try fixture.daemon()
        defer { _ = daemon.stop() }
        try daemon.waitUntilServing(timeout: 300)
        // 100-change transactions, written on: windows of messages are in flight when the node dies.
        let writing = Atomic(true)
        let tokens = PthreadLocked<[Int64]>([])
        let writer = Thread {
            // At most 40 transactions (4,000 changes): the stream is read back message by message at the end.
            while writing.load(ordering: .relaxed), tokens.withLock({ $0.count }) < 40 {
                if let token = try? fixture.legacySave(100) { tokens.withLock { $0.append(token) } }
            }
        }
        writer.start()
        defer {
            writing.store(false, ordering: .relaxed)
            while !writer.isFinished { usleep(10_000) }
        }
        let reader = try JetStream(servers: [cluster.urls[2]], name: "test-reader")
        #expect(try fixture.waitForMessages(300, reader) >= 300)
        cluster.nodes[0].stop()
        while !writer.isFinished { usleep(10_000) }
        let written = tokens.withLock { $0 }
        // Read back once the stream holds them all (a leader election may take seconds meanwhile).
        let expected = UInt64(written.count * 100)
        #expect(try fixture.waitForMessages(expected, reader, timeout: 240) == expected, "\(daemon.log)")
        #expect(try fixture.waitForNoLag(daemon) == 0, "\(daemon.log)")
        let messages = try waitForLast(written.last ?? 0, reader, fixture)
        #expect(messages.map(\.token) == written.flatMap { Array(repeating: $0, count: 100) }, "\(daemon.log)")
        #expect(Set(messages.map(\.id)).count == messages.count)
    }

    /// The stream's messages once its last one carries `token` (up to two minutes).
    private func waitForLast(
        _ token: Int64,
        _ stream: JetStream,
        _ fixture: Fixture
    ) throws -> [(token: Int64, id: String, json: [String: Any])] {
        // A read that fails meanwhile (a cluster electing a leader: JetStream error 10008) is tried again.
        let deadline = Date().addingTimeInterval(120)
        var messages = (try? fixture.messages(stream)) ?? []
        while (messages.last?.token ?? 0) < token && Date() < deadline {
            usleep(100_000)
            messages = (try? fixture.messages(stream)) ?? messages
        }
        // The whole stream as read in one go once it holds the last token; the error if reads still fail.
        return (messages.last?.token ?? 0) >= token ? messages : try fixture.messages(stream)
    }

    /// Servers that cannot be reached, a stream taking other subjects, and bad `[publish]` lines: exit 78 at
    /// start, naming the line, with nothing written.
    @Test func misconfigurationStopsTheStart() throws {
        let fixture = try Fixture()
        defer { fixture.server?.stop() }
        let files = [fixture.shared.legacy.path, fixture.shared.legacy.path + "-wal"]
        let before = files.map { FileManager.default.contents(atPath: $0) }
        func start(_ text: String) throws -> (status: Int32, log: String) {
            try text.write(toFile: fixture.config, atomically: true, encoding: .utf8)
            let daemon = try fixture.daemon()
            let status = daemon.stop(after: 30)
            return (status, daemon.log)
        }
        let unreachable = try start("[publish]\nnats-url = nats://127.0.0.1:1\ntimeout = 500ms\n")
        #expect(unreachable.status == 78, "\(unreachable.log)")
        #expect(unreachable.log.contains("coexistd.conf:2: cannot publish to nats://127.0.0.1:1"), "\(unreachable.log)")
        // A server that wants a user and a password: wrong ones, then none.
        let guarded = try NatsServer(extraArguments: ["--user", "app", "--pass", "right"])
        defer { guarded.stop() }
        let port = guarded.url.split(separator: ":").last ?? ""
        for url in ["nats://app:wrong@127.0.0.1:\(port)", guarded.url] {
            let refused = try start("[publish]\nnats-url = \(url)\n")
            #expect(refused.status == 78, "\(refused.log)")
            #expect(refused.log.contains("coexistd.conf:2: cannot publish to"), "\(refused.log)")
            #expect(!refused.log.contains("wrong"), "a password is never logged")
        }
        let js = try JetStream(servers: [fixture.url], name: "test")
        try js.ensureStream("STREAM", subject: "other.>")
        let other = try start("[publish]\nnats-url = \(fixture.url)\nstream = STREAM\n")
        #expect(other.status == 78, "\(other.log)")
        #expect(other.log.contains("coexistd.conf:3:") && other.log.contains("does not take subject coexist.*.*.*"))
        for (text, message) in [
            ("[publish]\nnats-url = http://x\n", "coexistd.conf:2: \"http://x\" is not a nats:// or tls:// URL"),
            ("[publish]\nsubject = a.{store}.{user}\n", "coexistd.conf:2: unknown placeholder {user}"),
            ("[publish]\nsubject = a.{store}.*\n", "coexistd.conf:2: \"a.{store}.*\": a token holds"),
            ("[publish]\nsubject = {store}.x\n", "coexistd.conf:2: \"{store}.x\": the first token is a name"),
            ("[publish]\nsubject = a.{entity}\n", "coexistd.conf:2: \"a.{entity}\": one token is {store}"),
            ("[publish]\nnats-url = nats://u:secret@h st\n", "\"nats://u:***@h st\" is not a nats://"),
            ("[publish]\nreplica = 3\n", "coexistd.conf:2: unknown key \"replica\" in [publish]"),
        ] {
            let result = try start(text)
            #expect(result.status == 78, "\(text)")
            #expect(result.log.contains(message), "\(result.log)")
            #expect(!result.log.contains("secret"), "a password is never logged")
        }
        #expect(files.map { FileManager.default.contents(atPath: $0) } == before, "nothing is written")
    }
}
