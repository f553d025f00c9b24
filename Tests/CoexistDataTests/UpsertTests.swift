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

    static let schema = RecordSchema<CarRecord>(
        entity: "Car",
        [.attribute("maker", \.maker), .attribute("model", \.model), .attribute("numberPlate", \.numberPlate)]
    )

    required init() {}

    convenience init(_ maker: String, _ model: String, plate: String) {
        self.init()
        self.maker = maker
        self.model = model
        numberPlate = plate
    }
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
}
