import CoexistBridge
import CoexistConfiguration
import CoexistHistory
import CoexistLegacyStore
import CoexistSQLite
import CoexistStore
import TestSupport
import Testing

/// What coexist writes into the history looks like Core Data's: every transaction records a bundle
/// identifier (never NULL in 18,475 real transactions), the bridge's the configured one.
@Suite struct TransactionFidelityTests {
    @Test func everyTransactionRecordsABundleIdentifier() throws {
        let directory = try TemporaryDirectory()
        let shared = try SharedStore.create(in: directory)
        let bridge = try SyncEngine(
            connection: try Connection(path: shared.legacy.path),
            model: nil,
            configuration: BridgeConfiguration(bundleID: "org.example.bridge")
        )
        try bridge.initialSyncIfNeeded()
        try shared.legacy.save(SaveMetadata(author: "old-app")) { save in
            _ = try save.insert("Task", ["id": DemoStore.uuid(1), "title": .string("a"), "createdAt": .date(0)])
        }
        try shared.new.save(SaveMetadata(author: "new-app", bundleID: "org.example.new")) { save in
            try save.insert("Category", ["id": DemoStore.uuid(2), "name": .string("c")])
        }
        _ = try bridge.catchUp()
        let rows = try bridge.connection.rows(
            """
            SELECT a.ZNAME, b.ZNAME FROM ATRANSACTION t LEFT JOIN ATRANSACTIONSTRING a ON a.Z_PK = t.ZAUTHORTS
            LEFT JOIN ATRANSACTIONSTRING b ON b.Z_PK = t.ZBUNDLEIDTS ORDER BY t.Z_PK
            """
        )
        let pairs = rows.map { ($0[0].textValue ?? "", $0[1].textValue) }
        #expect(pairs.count == 4, "\(pairs)")
        #expect(pairs.allSatisfy { $0.1 != nil }, "\(pairs)")
        #expect(pairs.filter { $0.0 == "old-app" }.map(\.1) == ["old-app"])
        #expect(pairs.filter { $0.0 == "new-app" }.map(\.1) == ["org.example.new"])
        #expect(pairs.filter { $0.0 == "coexistd" }.map(\.1) == ["org.example.bridge", "org.example.bridge"])
    }
}
