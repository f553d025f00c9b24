import CoexistConfiguration
import CoexistRuntime
import Foundation
import TestSupport
import Testing

/// The configuration file is read exactly as it reads: CRLF and a byte order mark are accepted, anything
/// ambiguous (a key twice, a stray carriage return, a name that is not an identifier, an override the model
/// does not have) is refused naming the file and line.
@Suite struct ConfigGrammarTests {
    func parse(_ text: String) throws(ConfigError) -> DaemonConfiguration {
        try DaemonConfiguration.parse(text, file: "c.conf")
    }

    func error(_ text: String) -> ConfigError? {
        do {
            _ = try parse(text)
            return nil
        } catch {
            return error
        }
    }

    @Test func crlfAndByteOrderMarkAreRead() throws {
        let crlf = try parse("database = /x\r\nallow-uids = 4242\r\nmax-clients = 7\r\n")
        #expect(crlf.database == "/x")
        #expect(crlf.limits.allowUIDs == [4242])
        #expect(crlf.limits.maxClients == 7)
        let bom = try parse("\u{FEFF}database = /y\nqueue-limit = 20\n")
        #expect(bom.database == "/y")
        #expect(bom.limits.queueLimit == 20)
    }

    @Test func ambiguousLinesAreRefusedWithTheirLine() throws {
        let cases: [(String, String)] = [
            ("database = /x\nmax-clients = 5\nmax-clients = 6\n", "c.conf:3: max-clients is already set at line 2"),
            ("database = /x\rallow-uids = 4242\n", "c.conf:1: the line holds a control character (U+000D)"),
            ("database = /x\nrequest-timeout = 0\n", "c.conf:2: request-timeout must be from 100ms to 1h"),
            // Intervals added to now are bounded (a longer one overflowed, stopping the daemon).
            ("database = /x\nheartbeat-interval = 200000d\n", "c.conf:2: heartbeat-interval must be from 100ms to 24h"),
            ("database = /x\npoll-interval = 200000d\n", "c.conf:2: poll-interval must be from 1ms to 24h"),
            // Each bound of the duplicate window (a longer one overflowed the nanoseconds sent to the server).
            ("[publish]\nduplicate-window = 200000d\n", "c.conf:2: the duplicate window is between 1s and 3650d"),
            ("[publish]\nduplicate-window = 500ms\n", "c.conf:2: the duplicate window is between 1s and 3650d"),
            ("[entity Task]\ntable = task; DROP TABLE ZTASK\n", "c.conf:2: table must be a plain identifier"),
            ("[entity Task]\ncolumn.title = \"x\"\n", "c.conf:2: column.title must be a plain identifier"),
            ("[entity Ta-sk]\ntable = t\n", "c.conf:2: [entity Ta-sk]"),
            ("[entity Task]\ntable = a\ntable = b\n", "c.conf:3: table is already set at line 2 in [entity Task]"),
        ]
        for (text, expected) in cases {
            let found = error(text)
            #expect(found?.description.hasPrefix(expected) == true, "\(found?.description ?? "accepted")")
        }
    }

    /// Overrides naming what the model does not have are refused by `--check-config` and at start, with
    /// the override's file and line; the store is not touched.
    @Test func overridesAreCheckedAgainstTheModel() throws {
        let directory = try TemporaryDirectory()
        let path = try SharedStore.create(in: directory).legacy.path
        let socket = directory.file("c.sock")
        let cases: [(String, String)] = [
            ("[entity Nope]\ntable = nope\n", ":5: [entity Nope]: the model has no entity Nope"),
            ("[entity Task]\ncolumn.nosuch = x\n", ":5: [entity Task]: Task has no stored attribute or to-one"),
            ("[entity Task]\nidentity = nosuch\n", ":5: [entity Task]: identity names nosuch"),
        ]
        let before = FileManager.default.contents(atPath: path)
        for (override, expected) in cases {
            let file = try directory.write(
                "c.conf",
                Array("database = \(path)\nsocket = \(socket)\n\n\(override)".utf8)
            )
            for extra in [["--check-config"], []] {
                let result = try ProductProcess.run("coexistd", ["--config", file] + extra)
                #expect(result.status == 78, "\(result.stderr)")
                #expect(result.stderr.contains(file + expected), "\(result.stderr)")
            }
        }
        #expect(FileManager.default.contents(atPath: path) == before)
    }

    /// A CRLF file's `allow-uids` applies: a peer outside the list is refused.
    @Test func crlfAllowlistApplies() throws {
        let directory = try TemporaryDirectory()
        let path = try SharedStore.create(in: directory).legacy.path
        let file = try directory.write(
            "c.conf",
            Array("database = \(path)\r\nsocket = \(directory.file("c.sock"))\r\nallow-uids = 4242\r\n".utf8)
        )
        #expect(try ProductProcess.run("coexistd", ["--config", file, "--check-config"]).status == 0)
        let daemon = try DaemonProcess(database: path, directory: directory, options: ["--config", file])
        let client = try SocketClient(path: daemon.socket)
        #expect(client.readLine()?.contains("forbidden") == true)
        #expect(daemon.stop() == 0)
    }

    /// A reload that sets an allowlist without a connected peer's uid closes that peer's connection (with
    /// `forbidden`): it went on receiving every event.
    @Test func aReloadNarrowingTheAllowlistClosesWhoItLeavesOut() throws {
        let directory = try TemporaryDirectory()
        let path = try SharedStore.create(in: directory).legacy.path
        let base = "database = \(path)\nsocket = \(directory.file("c.sock"))\n"
        let file = try directory.write("c.conf", Array(base.utf8))
        let daemon = try DaemonProcess(database: path, directory: directory, options: ["--config", file])
        try daemon.waitUntilServing(timeout: 300)
        let client = try SocketClient(path: daemon.socket)
        #expect(try client.request(#"{"op":"subscribe","since":"now"}"#)["type"] as? String == "subscribed")
        #expect(client.readLine()?.contains("end_of_backlog") == true)
        try (base + "allow-uids = \(getuid() &+ 4242)\n").write(toFile: file, atomically: true, encoding: .utf8)
        kill(daemon.process.processIdentifier, SIGHUP)
        var closed = false
        var forbidden = false
        let deadline = Date().addingTimeInterval(30)
        while !closed && Date() < deadline {
            guard let line = client.readLine() else {
                closed = true
                break
            }
            if line.contains("forbidden") { forbidden = true }
        }
        #expect(forbidden && closed, "\(daemon.log)")
        #expect(daemon.stop() == 0)
    }

    @Test func anOptionGivenTwiceIsAUsageError() throws {
        let result = try ProductProcess.run("coexistd", ["--batch-size", "1", "--batch-size", "2", "--check-config"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("--batch-size is given twice"))
    }
}
