import CoexistHistory
import CoexistLegacyStore
import CoexistStore
import Foundation
import TestSupport
import Testing

/// A backlog among recently published transactions is given the lines encoded when they were published; it
/// must be, byte for byte, the backlog a restarted daemon reads from the history, objects not yet mirrored
/// when published included.
@Suite struct RecentEventsBacklogTests {
    @Test func aBacklogFromTheRecordIsTheBacklogFromTheHistory() throws {
        let fixture = try EventFixture()
        let live = try fixture.client()
        live.send(#"{"op":"subscribe","since":"now"}"# + "\n")
        _ = try fixture.collect(live) { $0["type"] as? String == "subscribed" }
        let before = try fixture.shared.legacy.connection.scalar("SELECT max(Z_PK) FROM ATRANSACTION").integerValue ?? 0
        var written: Int64 = 0
        for round in 0..<15 {
            written = try fixture.legacyInsert("legacy \(round)")
            written =
                try fixture.shared.new.save(SaveMetadata(author: "new-app")) { save in
                    _ = try save.insert("Category", ["name": .string("new \(round)")])
                }.token ?? written
        }
        let waited = try fixture.client().request(#"{"op":"wait","token":\#(written),"timeout":20000}"#)
        #expect(waited["type"] as? String == "waited")
        let last = try fixture.shared.legacy.connection.scalar("SELECT max(Z_PK) FROM ATRANSACTION").integerValue ?? 0
        _ = try fixture.collect(live) { ($0["token"] as? Int).map { Int64($0) >= last } ?? false }
        let status = try fixture.client().request(#"{"op":"status"}"#)
        #expect((status["recentTransactions"] as? Int ?? 0) >= Int(last - before))

        func backlog(_ daemon: DaemonProcess) throws -> [String] {
            let client = try SocketClient(path: daemon.socket)
            client.send(#"{"op":"subscribe","since":\#(before),"mirrors":true}"# + "\n")
            var lines: [String] = []
            while let line = client.readLine(), !line.contains(#""type":"end_of_backlog""#) {
                if line.contains(#""type":"event""#) { lines.append(line) }
            }
            return lines
        }
        let fromRecord = try backlog(fixture.daemon)
        // A pass mirrors what it finds pending in one save per side: the 30 commits' 30 changes, and 30
        // mirrored changes in as many mirror transactions as passes.
        #expect(fromRecord.count == 60, "30 commits and their 30 mirrored changes")
        #expect(fixture.daemon.stop() == 0)
        let restarted = try DaemonProcess(database: fixture.shared.legacy.path, directory: fixture.directory)
        defer { restarted.stop() }
        _ = try SocketClient(path: restarted.socket)
        let fromHistory = try backlog(restarted)
        #expect(fromRecord == fromHistory)
    }
}
