import CoexistData
import CoexistLegacyStore
import CoexistModel
import CoexistStore
import Foundation
import TestSupport
import Testing

/// A SampleModel `Car` (its number plate is unique in the model) as a record.
final class CarRecord: PersistentModel {
    var maker = ""
    var model = ""
    var numberPlate = ""
    var owner: PersonRecord?

    static let schema = RecordSchema<CarRecord>(
        entity: "Car",
        [
            .attribute("maker", \.maker), .attribute("model", \.model), .attribute("numberPlate", \.numberPlate),
            .toOne("owner", \.owner),
        ]
    )

    required init() {}

    convenience init(_ maker: String, _ model: String, plate: String) {
        self.init()
        self.maker = maker
        self.model = model
        numberPlate = plate
    }
}

/// A SampleModel `Person` (first and last name unique together).
final class PersonRecord: PersistentModel {
    var firstName = ""
    var lastName = ""
    var updatedAt = Date()
    var cars: [CarRecord] = []

    static let schema = RecordSchema<PersonRecord>(
        entity: "Person",
        [
            .attribute("firstName", \.firstName), .attribute("lastName", \.lastName),
            .attribute("updatedAt", \.updatedAt), .toMany("cars", \.cars),
        ]
    )

    required init() {}
}

/// Upserts by uniqueness, on a copy of the CoreDataPlus SampleModel V2 store with its new schema: a new
/// record holding a stored record's unique values updates it instead of failing.
@Suite struct UpsertTests {
    let directory: TemporaryDirectory
    let store: NewStore

    init() throws {
        directory = try TemporaryDirectory()
        let path = try directory.copy(Fixtures.sampleModelV2)
        let model = try #require(try LegacyStore(path: path).model)
        store = try NewStore(path: path, model: model)
        try store.createSchema()
    }

    @Test func aNewRecordWithAStoredUniqueValueUpdatesIt() throws {
        let first = try ModelContext(store, author: "first")
        let original = CarRecord("FIAT", "Panda", plate: "AB-123")
        first.insert(original)
        try first.save()
        let identifier = try #require(first.persistentIdentifier(of: original))

        let second = try ModelContext(store, author: "second")
        let again = CarRecord("Fiat", "Panda 4x4", plate: "AB-123")
        second.insert(again)
        let token = try #require(try second.save())
        #expect(second.persistentIdentifier(of: again) == identifier)
        let cars = try ModelContext(store).fetch(
            FetchDescriptor<CarRecord>(predicate: #Predicate { $0.numberPlate == "AB-123" })
        )
        #expect(cars.map(\.maker) == ["Fiat"] && cars.map(\.model) == ["Panda 4x4"])
        // Recorded as the update it is.
        let last = try #require(try second.fetchHistory(HistoryDescriptor(after: token - 1)).first)
        #expect(last.changes == [.update(identifier, updatedAttributes: ["maker", "model"])])

        // Another plate is a plain insert.
        second.insert(CarRecord("Kia", "Picanto", plate: "CD-456"))
        try second.save()
        #expect(try ModelContext(store).fetchCount(FetchDescriptor<CarRecord>()) == 2)
    }

    /// What the new record leaves empty keeps the stored value (here the owner); a save that fails puts the
    /// new record back as it was.
    @Test func anUpsertKeepsStoredRelationshipsAndAFailedSaveUndoesIt() throws {
        let first = try ModelContext(store, author: "first")
        let owner = PersonRecord()
        owner.firstName = "Ada"
        owner.lastName = "Lovelace"
        let original = CarRecord("FIAT", "Panda", plate: "AB-123")
        original.owner = owner
        first.insert(original)
        try first.save()
        let identifier = try #require(first.persistentIdentifier(of: original))

        // A trigger refuses one row of the next save: the whole save fails, the upsert is undone.
        try store.connection.execute(
            "CREATE TEMP TRIGGER refuse BEFORE INSERT ON main.car WHEN NEW.number_plate = 'FAIL' BEGIN SELECT RAISE(ABORT, 'refused'); END"
        )
        let second = try ModelContext(store, author: "second")
        let again = CarRecord("Fiat", "Panda 4x4", plate: "AB-123")
        second.insert(again)
        second.insert(CarRecord("Nobody", "Nothing", plate: "FAIL"))
        #expect(throws: (any Error).self) { try second.save() }
        #expect(second.persistentIdentifier(of: again) != identifier)
        #expect(again.owner == nil)
        try store.connection.execute("DROP TRIGGER temp.refuse")

        let third = try ModelContext(store, author: "third")
        let upserted = CarRecord("Fiat", "Panda 4x4", plate: "AB-123")
        third.insert(upserted)
        try third.save()
        #expect(third.persistentIdentifier(of: upserted) == identifier)
        let stored = try ModelContext(store).model(for: identifier, as: CarRecord.self)
        #expect(stored?.owner?.lastName == "Lovelace" && stored?.maker == "Fiat")
    }

    /// A uniqueness constraint on the identity itself: inserting a record with a stored identity is an
    /// update (it used to fail every insert of such an entity).
    @Test func aConstraintOnTheIdentity() throws {
        let xml = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" sourceLanguage="Swift">
                <entity name="Tag" representedClassName="Tag" syncable="YES">
                    <attribute name="id" attributeType="UUID" usesScalarValueType="NO"/>
                    <attribute name="name" optional="YES" attributeType="String"/>
                    <uniquenessConstraints><uniquenessConstraint><constraint value="id"/></uniquenessConstraint></uniquenessConstraints>
                </entity>
            </model>
            """
        let model = try XCDataModelReader.read(path: try directory.write("Tags.contents", Array(xml.utf8)))
        let path = directory.file("Tags.sqlite")
        _ = try StoreCreator.create(path: path, model: model)
        let tags = try NewStore(path: path, model: model)
        try tags.createSchema()
        let id = UUID()
        let first = try ModelContext(tags)
        first.insert(TagRecord(id, "swift"))
        try first.save()
        let second = try ModelContext(tags)
        second.insert(TagRecord(id, "Swift"))
        second.insert(TagRecord(UUID(), "sqlite"))
        try second.save()
        let stored = try ModelContext(tags).fetch(FetchDescriptor<TagRecord>()).map(\.name).sorted()
        #expect(stored == ["Swift", "sqlite"])
    }
}

/// A tag whose identity is its own unique `id`.
final class TagRecord: PersistentModel {
    var id = UUID()
    var name = ""

    static let schema = RecordSchema<TagRecord>(entity: "Tag", [.attribute("id", \.id), .attribute("name", \.name)])

    required init() {}

    convenience init(_ id: UUID, _ name: String) {
        self.init()
        self.id = id
        self.name = name
    }
}
