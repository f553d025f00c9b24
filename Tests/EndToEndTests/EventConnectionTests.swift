import CoexistBridge
import CoexistConfiguration
import CoexistDaemon
import CoexistSQLite
import Foundation
import TestSupport
import Testing

/// The event service never writes: its connection is read-only, and a consumer's `ack` is recorded by the
/// bridge thread and answered once it is in the database.
@Suite struct EventConnectionTests {
    @Test func theEventConnectionCannotWrite() throws {
        let directory = try TemporaryDirectory()
        let shared = try SharedStore.create(in: directory)
        let bridge = try SyncEngine(connection: try Connection(path: shared.legacy.path), model: nil)
        try bridge.initialSyncIfNeeded()
        let configuration = try DaemonConfiguration.parse("database = \(shared.legacy.path)\n", file: "test.conf")
        let engine = try Daemon.openEventEngine(configuration)
        for statement in [
            "CREATE TABLE intruder (x)", "DELETE FROM coexist_bridge", "UPDATE coexist_bridge SET cursor = 0",
            "DELETE FROM ZTASK", "DELETE FROM task",
        ] {
            do {
                try engine.connection.execute(statement)
                Issue.record("the event connection ran \(statement)")
            } catch {
                #expect(error.primaryCode == 8 || "\(error)".contains("readonly"), "\(statement): \(error)")
            }
        }
    }

    @Test func anAckIsInTheDatabaseWhenItIsAnswered() throws {
        let fixture = try EventFixture()
        let token = try fixture.legacyInsert("to acknowledge")
        let client = try fixture.client()
        client.send(#"{"op":"subscribe","since":0,"name":"durable-reader"}"# + "\n")
        _ = try fixture.collect(client) { ($0["token"] as? Int).map { Int64($0) >= token } ?? false }
        client.send(#"{"op":"ack","token":\#(token)}"# + "\n")
        let replies = try fixture.collect(client) { $0["type"] as? String == "acked" }
        #expect(replies.last?["type"] as? String == "acked", "\(replies)")
        let stored = try fixture.shared.legacy.connection.scalar(
            "SELECT acked FROM coexist_consumer WHERE name = 'durable-reader'"
        )
        #expect(stored.integerValue == token)
        // Requests after an ack are answered after it, in order.
        client.send(#"{"op":"ack","token":\#(token)}"# + "\n" + #"{"op":"ping"}"# + "\n")
        let types = try fixture.collect(client) { $0["type"] as? String == "pong" }.compactMap { $0["type"] as? String }
        #expect(types.filter { $0 != "heartbeat" }.suffix(2) == ["acked", "pong"])
    }
}
