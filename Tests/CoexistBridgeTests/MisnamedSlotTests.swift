import CoexistBridge
import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistSQLite
import CoexistStore
import TestSupport
import Testing

/// Which to-many a many-to-many slot of `ZCOLUMNS` names is a guess (coredata-sqlite-format.md §4.3). A
/// writer whose order differs from the bridge's (here: the same model with its many-to-manys declared the
/// other way round, as Core Data's own order differs from any model file's) makes the bridge read the wrong name:
/// the mirror must still be equal, because any to-many slot makes the bridge re-derive every to-many of the
/// object.
@Suite struct MisnamedSlotTests {
    /// Books and tags with two many-to-manys between them, declared in `order` (or the other way round).
    static func xml(swapped: Bool) -> String {
        let book = [
            #"<relationship name="tags" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Tag" inverseName="books" inverseEntity="Tag"/>"#,
            #"<relationship name="picks" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Tag" inverseName="pickedBy" inverseEntity="Tag"/>"#,
        ]
        let tag = [
            #"<relationship name="books" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Book" inverseName="tags" inverseEntity="Book"/>"#,
            #"<relationship name="pickedBy" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Book" inverseName="picks" inverseEntity="Book"/>"#,
        ]
        let order = { (pair: [String]) in (swapped ? pair.reversed() : pair).joined(separator: "\n") }
        return """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
                <entity name="Book" representedClassName="Book" syncable="YES">
                    <attribute name="id" optional="YES" attributeType="UUID" usesScalarValueType="NO"/>
                    <attribute name="title" optional="YES" attributeType="String"/>
                    \(order(book))
                </entity>
                <entity name="Tag" representedClassName="Tag" syncable="YES">
                    <attribute name="id" optional="YES" attributeType="UUID" usesScalarValueType="NO"/>
                    <attribute name="name" optional="YES" attributeType="String"/>
                    \(order(tag))
                </entity>
            </model>
            """
    }

    @Test func aMisnamedToManySlotStillMirrors() throws {
        let directory = try TemporaryDirectory()
        let bridgeModel = try XCDataModelReader.read(
            path: try directory.write("bridge.contents", Array(Self.xml(swapped: false).utf8))
        )
        let writerModel = try XCDataModelReader.read(
            path: try directory.write("writer.contents", Array(Self.xml(swapped: true).utf8))
        )
        let book = try #require(bridgeModel.entity(named: "Book"))
        let bridgeSlots = PropertyBitmap(entity: book, model: bridgeModel).slots
        let writerSlots = PropertyBitmap(entity: try #require(writerModel.entity(named: "Book")), model: writerModel)
            .slots
        #expect(bridgeSlots.firstIndex(of: "tags") == writerSlots.firstIndex(of: "picks"), "the slots are swapped")
        let path = directory.file("Library.sqlite")
        _ = try StoreCreator.create(path: path, model: bridgeModel)
        let bridge = try SyncEngine(connection: try Connection(path: path), model: bridgeModel)
        try bridge.initialSyncIfNeeded()
        let writer = try LegacyStore(path: path, model: writerModel, options: OpenOptions(access: .readWrite))
        let old = SaveMetadata(author: "old-app")
        var books: [ObjectID] = []
        var tags: [ObjectID] = []
        try writer.save(old) { save in
            for index in 0..<2 {
                books.append(
                    try save.insert("Book", ["id": DemoStore.uuid(UInt8(index)), "title": .string("b\(index)")])
                )
                tags.append(
                    try save.insert("Tag", ["id": DemoStore.uuid(UInt8(10 + index)), "name": .string("t\(index)")])
                )
            }
        }
        _ = try bridge.catchUp()
        // Both ends' updates name, to the bridge, the other many-to-many.
        try writer.save(old) { save in try save.add(books[0], to: "tags", [tags[0], tags[1]]) }
        let decoded = try HistoryReader(
            connection: bridge.connection,
            decoder: StoreChangeDecoder(store: bridge.legacy)
        )
        .transactions(after: try bridge.cursor() ?? 0).flatMap(\.changes).filter { $0.side == .legacy }
        #expect(decoded.map(\.properties) == [["picks"], ["pickedBy"], ["pickedBy"]], "misread, as intended")
        _ = try bridge.catchUp()
        let report = try Verifier(engine: bridge).run()
        #expect(report.equal, "\(report.differences.prefix(5))")
        try writer.save(old) { save in
            try save.remove(books[0], from: "tags", [tags[1]])
            try save.add(books[1], to: "picks", [tags[0]])
        }
        _ = try bridge.catchUp()
        let again = try Verifier(engine: bridge).run()
        #expect(again.equal, "\(again.differences.prefix(5))")
    }
}
