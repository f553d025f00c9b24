import CoexistHistory
import CoexistLegacyStore
import CoexistStore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Where coexistd's log lines go: a terminal gets timed lines, a journal stream priority prefixes, the
/// journal itself structured fields.
@Suite struct DaemonLoggingTests {
    /// Run by hand (no INVOCATION_ID, no JOURNAL_STREAM): every line on standard error starts with its
    /// RFC 3339 time and level, even on a host with a journal.
    /// Also when it inherits a service's variables (a shell in a terminal's user service, a CI runner's
    /// job): INVOCATION_ID, a JOURNAL_STREAM that is not its stderr, a SYSTEMD_EXEC_PID that is not its pid.
    @Test(arguments: [false, true])
    func aHandRunDaemonWritesTimedLinesToStandardError(inheritsAService: Bool) throws {
        let directory = try TemporaryDirectory()
        let store = try SharedStore.create(in: directory).legacy.path
        var environment = ProcessInfo.processInfo.environment
        environment["INVOCATION_ID"] = inheritsAService ? "0123456789abcdef0123456789abcdef" : nil
        environment["JOURNAL_STREAM"] = inheritsAService ? "8:12345" : nil
        environment["SYSTEMD_EXEC_PID"] = inheritsAService ? "1" : nil
        let result = try ProductProcess.run(
            "coexistd",
            ["--database", store, "--socket", directory.file("c.sock"), "--once", "--config", "/dev/null"],
            environment: environment
        )
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stderr.split(separator: "\n")
        #expect(!lines.isEmpty)
        let timed = #/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z (error|warning|notice|info|debug): /#
        for line in lines { #expect(line.firstMatch(of: timed) != nil, "untimed line: \(line)") }
        #expect(result.stderr.contains("notice: caught up"))
    }

    /// Standard error that is the journal's stream (JOURNAL_STREAM names it) gets `<N>` priority prefixes
    /// and no time (the journal adds both), when the native journal socket is not there to use instead.
    @Test(.enabled(if: access("/run/systemd/journal/socket", F_OK) != 0, "a journal is running here"))
    func aJournalStreamGetsPriorityPrefixes() throws {
        let directory = try TemporaryDirectory()
        let store = try SharedStore.create(in: directory).legacy.path
        let log = directory.file("stream.log")
        #expect(FileManager.default.createFile(atPath: log, contents: nil))
        var info = stat()
        #expect(stat(log, &info) == 0)
        let script = "exec \"$0\" \"$@\" 2>>\"$LOG\""
        let result = try ProductProcess.run(
            path: "/bin/sh",
            [
                "-c", script, ProductProcess.productsDirectory + "/coexistd", "--database", store, "--socket",
                directory.file("c.sock"), "--once", "--config", "/dev/null",
            ],
            environment: ["LOG": log, "JOURNAL_STREAM": "\(info.st_dev):\(info.st_ino)", "PATH": "/usr/bin:/bin"]
        )
        #expect(result.status == 0)
        let text = String(decoding: FileManager.default.contents(atPath: log) ?? Data(), as: UTF8.self)
        #expect(text.hasPrefix("<5>caught up"), "\(text)")
    }

    /// Under systemd, the journal gets each message with its fields: the peer refused by the allowlist
    /// (its uid and pid, what happened) and the ready line (database, token), with the code location.
    /// The journal is this test's own socket, in a private mount namespace (the host's is untouched).
    @Test(.enabled(if: getuid() == 0, "a private mount namespace needs root"))
    func theJournalGetsStructuredFields() throws {
        let directory = try TemporaryDirectory()
        let store = try SharedStore.create(in: directory).legacy.path
        let capture = Fixtures.repository + "/Tests/EndToEndTests/Python/journal_capture.py"
        let script = "mount -t tmpfs tmpfs /run && exec python3 \"$@\""
        let result = try ProductProcess.run(
            path: "unshare",
            [
                "--mount", "--propagation", "private", "/bin/sh", "-c", script, "sh", capture,
                ProductProcess.productsDirectory + "/coexistd", "--database", store, "--socket",
                directory.file("c.sock"), "--allow-uids", "4242", "--config", "/dev/null",
            ]
        )
        #expect(result.status == 0, "\(result.stderr)")
        let entries = result.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: String]
        }
        let summary = entries.last ?? [:]
        #expect(summary["STATUS"] == "0", "\(summary)")
        #expect(summary["STDERR"]?.isEmpty == true, "under systemd nothing goes to stderr: \(summary)")
        let refused = entries.first { $0["MESSAGE"]?.hasPrefix("refused a peer") == true }
        #expect(refused?["COEXIST_EVENT"] == "refused", "\(entries)")
        #expect(refused?["COEXIST_PEER_UID"] == "0")
        #expect(refused?["COEXIST_PEER_PID"].flatMap { Int($0) } != nil)
        #expect(refused?["PRIORITY"] == "4")
        #expect(refused?["SYSLOG_IDENTIFIER"] == "coexistd")
        #expect(refused?["CODE_FILE"]?.hasPrefix("CoexistEvents/") == true)
        let ready = entries.first { $0["MESSAGE"]?.hasPrefix("coexistd ready") == true }
        #expect(ready?["COEXIST_DATABASE"] == store)
        #expect(ready?["COEXIST_TOKEN"].flatMap { Int($0) } != nil)
    }
}

extension DaemonLoggingTests {
    /// A descendant of a service (it inherits INVOCATION_ID and a SYSTEMD_EXEC_PID that is not its pid)
    /// writes to its standard error, not to the journal, even with the journal's socket there.
    @Test(.enabled(if: getuid() == 0, "a private mount namespace needs root"))
    func aServicesDescendantKeepsItsStandardError() throws {
        let directory = try TemporaryDirectory()
        let store = try SharedStore.create(in: directory).legacy.path
        let capture = Fixtures.repository + "/Tests/EndToEndTests/Python/journal_capture.py"
        var environment = ProcessInfo.processInfo.environment
        environment["AS_DESCENDANT"] = "1"
        let result = try ProductProcess.run(
            path: "unshare",
            [
                "--mount", "--propagation", "private", "/bin/sh", "-c",
                "mount -t tmpfs tmpfs /run && exec python3 \"$@\"",
                "sh", capture, ProductProcess.productsDirectory + "/coexistd", "--database", store, "--socket",
                directory.file("c.sock"), "--config", "/dev/null",
            ],
            environment: environment
        )
        #expect(result.status == 0, "\(result.stderr)")
        let entries = result.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: String]
        }
        #expect(entries.count == 1, "only the summary, no journal entry: \(entries)")
        #expect(entries.last?["STDERR"]?.contains("notice: coexistd ready") == true, "\(entries)")
    }
}

extension DaemonLoggingTests {
    /// A conflict and parked objects reach the journal with the fields that name them: what happened, the
    /// side, entity, object, property and token. The store is prepared with coexistd stopped: both sides
    /// change one category's name, and two Core Data tasks share another's id.
    @Test(.enabled(if: getuid() == 0, "a private mount namespace needs root"))
    func conflictsAndParkedObjectsCarryTheirFields() throws {
        let directory = try TemporaryDirectory()
        let shared = try SharedStore.create(in: directory)
        let store = shared.legacy.path
        let author = SaveMetadata(author: "old-app")
        var category = ObjectID(entity: "Category", pk: 0)
        try shared.legacy.save(author) { save in
            category = try save.insert("Category", ["id": DemoStore.uuid(1), "name": .string("start")])
        }
        let synced = try ProductProcess.run(
            "coexistd",
            ["--database", store, "--socket", directory.file("c.sock"), "--config", "/dev/null", "--once"]
        )
        #expect(synced.status == 0, "\(synced.stderr)")
        try shared.legacy.save(author) { save in
            try save.update(category, ["name": .string("legacy")])
            for title in ["twin a", "twin b"] {
                _ = try save.insert("Task", ["id": DemoStore.uuid(9), "title": .string(title), "createdAt": .date(0)])
            }
        }
        let ref = ObjectRef(entity: "Category", id: try #require(DemoStore.uuid(1).uuidString))
        try shared.new.save(SaveMetadata(author: "new-app")) { save in try save.update(ref, ["name": .string("new")]) }

        let capture = Fixtures.repository + "/Tests/EndToEndTests/Python/journal_capture.py"
        var environment = ProcessInfo.processInfo.environment
        environment["WAIT_FOR_EVENTS"] = "conflict,parked-object"  // the bridge logs them after "ready"
        let result = try ProductProcess.run(
            path: "unshare",
            [
                "--mount", "--propagation", "private", "/bin/sh", "-c",
                "mount -t tmpfs tmpfs /run && exec python3 \"$@\"", "sh", capture,
                ProductProcess.productsDirectory + "/coexistd", "--database", store, "--socket",
                directory.file("c.sock"), "--config", "/dev/null", "--allow-uids", "4242",
            ],
            environment: environment
        )
        #expect(result.status == 0, "\(result.stderr)")
        let entries = result.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: String]
        }
        let conflict = entries.first { $0["COEXIST_EVENT"] == "conflict" }
        #expect(conflict?["COEXIST_ENTITY"] == "Category", "\(entries)")
        #expect(conflict?["COEXIST_PROPERTY"] == "name")
        #expect(conflict?["COEXIST_OBJECT"]?.isEmpty == false)
        #expect(conflict?["COEXIST_TOKEN"].flatMap { Int64($0) } != nil)
        #expect(conflict?["PRIORITY"] == "4")
        let parked = entries.first { $0["COEXIST_EVENT"] == "parked-object" }
        #expect(parked?["COEXIST_SIDE"] == "legacy", "\(entries)")
        #expect(parked?["COEXIST_ENTITY"] == "Task")
        #expect(parked?["COEXIST_OBJECT"]?.isEmpty == false)
    }
}
