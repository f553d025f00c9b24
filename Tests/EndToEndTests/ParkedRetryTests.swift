import CoexistHistory
import CoexistLegacyStore
import CoexistSQLite
import Foundation
import TestSupport
import Testing

/// A parked transaction is not left parked: once what blocked it has gone, coexistd mirrors it again on its
/// own (nothing touches the object again), `status` stops counting it, and `verify` is equal.
@Suite struct ParkedRetryTests {
    @Test func aParkedTransactionMirrorsOnceItsObstacleHasGone() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.copy(Fixtures.sampleModelV1)
        let daemon = try DaemonProcess(
            database: path,
            directory: directory,
            options: ["--parked-retry-interval", "1s"]
        )
        defer { daemon.stop() }
        try daemon.waitUntilServing(timeout: 300)
        let client = try SocketClient(path: daemon.socket)
        // A row in the new schema that no history knows of holds the name the legacy app is about to use.
        let raw = try Connection(path: path)
        try raw.execute(
            "INSERT INTO person (id, first_name, last_name) VALUES ('00000000-0000-4000-8000-000000000001', 'Ada', 'Stray')"
        )
        let store = try LegacyStore(path: path, options: OpenOptions())
        var values = DemoStore.mandatoryValues(for: "Person", in: store)
        values["firstName"] = .string("Ada")
        values["lastName"] = .string("Stray")
        values["id"] = DemoStore.uuid(7)
        let token = try store.save(SaveMetadata(author: "old-app")) { save in _ = try save.insert("Person", values) }
            .token
        #expect(token != nil)

        func status() throws -> [String: Any] { try client.request(#"{"op":"status"}"#) }
        func waitFor(_ condition: ([String: Any]) -> Bool) throws -> [String: Any] {
            var last: [String: Any] = [:]
            for _ in 0..<100 {
                last = try status()
                if condition(last) { break }
                usleep(100_000)
            }
            return last
        }
        let parked = try waitFor { ($0["parked"] as? Int ?? 0) == 1 }
        #expect(parked["parked"] as? Int == 1, "\(parked)")
        #expect((parked["oldestParked"] as? String)?.contains("UNIQUE") == true, "\(parked)")

        // Pruning keeps a parked transaction: retrying it reads it from the history.
        let prune = try ProductProcess.run("coexistctl", ["history", "prune", path, "--before", "1000"])
        #expect(prune.status == 0, "\(prune.stderr)")
        let kept = try raw.scalar("SELECT count(*) FROM ATRANSACTION WHERE Z_PK = ?", [.integer(token ?? 0)])
        #expect(kept.integerValue == 1, "\(prune.stdout)")

        try raw.execute("DELETE FROM person WHERE last_name = 'Stray'")
        let retried = try waitFor { ($0["parked"] as? Int ?? 1) == 0 }
        #expect(retried["parked"] as? Int == 0, "\(retried)")
        #expect(retried["oldestParked"] is NSNull, "\(retried)")
        let mirrors = try raw.scalar(
            "SELECT count(*) FROM coexist_mirror WHERE source_token = ?",
            [.integer(token ?? 0)]
        )
        #expect(mirrors.integerValue == 1, "mirrored exactly once")
        let verify = try ProductProcess.run("coexistctl", ["verify", path])
        #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
        #expect(daemon.log.contains("parked transactions and objects mirrored on retry"), "\(daemon.log)")
    }
}
