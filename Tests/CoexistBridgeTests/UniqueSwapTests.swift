import CoexistBridge
import CoexistConfiguration
import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistSQLite
import CoexistStore
import TestSupport
import Testing

/// Unique values that move between objects (CoreDataPlus `SampleModel`: Person is unique on firstName +
/// lastName, Car on numberPlate) mirror without parking, in both directions: a swap inside one save, and a
/// chain of renames over several saves mirrored together, as after a daemon stop. Mirrored one object at a
/// time from the objects' current states, each of these collided with a value another object still held
/// in the target.
@Suite struct UniqueSwapTests {
    let old = SaveMetadata(author: "old-app")
    let newApp = SaveMetadata(author: "new-app")

    struct Bridged {
        let directory: TemporaryDirectory
        let legacy: LegacyStore
        let new: NewStore
        let engine: SyncEngine
    }

    /// A bridged copy of the fixture; `batchSize` 1: every pass stops after one transaction, as a pass
    /// does at its change budget in a large backlog.
    func bridged(batchSize: Int = BridgeConfiguration().batchSize) throws -> Bridged {
        let directory = try TemporaryDirectory()
        let path = try directory.copy(Fixtures.sampleModelV1)
        let engine = try SyncEngine(
            connection: try Connection(path: path),
            model: nil,
            configuration: BridgeConfiguration(batchSize: batchSize)
        )
        try engine.initialSyncIfNeeded()
        let legacy = try LegacyStore(path: path, options: OpenOptions())
        let model = try #require(legacy.model)
        return Bridged(
            directory: directory,
            legacy: legacy,
            new: try NewStore(path: path, model: model, options: OpenOptions()),
            engine: engine
        )
    }

    /// Two people of the fixture, by legacy identity, with their names.
    func twoPeople(_ store: LegacyStore) throws -> [(ObjectID, String)] {
        let people = try store.objects(of: "Person").prefix(2)
        return try people.map { person in
            guard case .string(let first)? = person.attributes["firstName"] else {
                throw LegacyStoreError.validation(path: store.path, detail: "no first name")
            }
            return (person.id, first)
        }
    }

    func expectConverged(_ bridged: Bridged, _ comment: Comment) throws {
        let result = try bridged.engine.catchUp()
        #expect(result.parked == 0, comment)
        #expect(try bridged.engine.parkedCount() == 0, comment)
        let report = try Verifier(engine: bridged.engine).run()
        #expect(report.equal, "\(comment): \(report.differences.prefix(5))")
    }

    @Test func aSwapInOneLegacySaveMirrors() throws {
        let bridged = try bridged()
        let people = try twoPeople(bridged.legacy)
        let (a, b) = (people[0], people[1])
        // Both share no last name; give them one, then swap the first names in one save.
        try bridged.legacy.save(old) { save in
            try save.update(a.0, ["lastName": .string("Same")])
            try save.update(b.0, ["lastName": .string("Same")])
        }
        try expectConverged(bridged, "same last name")
        try bridged.legacy.save(old) { save in
            try save.update(a.0, ["firstName": .string("(moving)")])
            try save.update(b.0, ["firstName": .string(a.1)])
            try save.update(a.0, ["firstName": .string(b.1)])
        }
        try expectConverged(bridged, "swap in one legacy save")
        let swapped = try bridged.new.connection.rows(
            "SELECT first_name FROM person WHERE last_name = 'Same' ORDER BY first_name"
        )
        #expect(swapped.map { $0[0] } == [a.1, b.1].sorted().map { SQLiteValue.text($0) })
    }

    @Test(arguments: [1, BridgeConfiguration().batchSize])
    func aRenameChainOverThreeLegacySavesMirrors(batchSize: Int) throws {
        let bridged = try bridged(batchSize: batchSize)
        let people = try twoPeople(bridged.legacy)
        let (a, b) = (people[0], people[1])
        try bridged.legacy.save(old) { save in
            try save.update(a.0, ["lastName": .string("Chain")])
            try save.update(b.0, ["lastName": .string("Chain")])
        }
        try expectConverged(bridged, "same last name")
        // While the bridge is not running: A gives up its name, B takes it, A takes B's old one.
        try bridged.legacy.save(old) { save in try save.update(a.0, ["firstName": .string("(moving)")]) }
        try bridged.legacy.save(old) { save in try save.update(b.0, ["firstName": .string(a.1)]) }
        try bridged.legacy.save(old) { save in try save.update(a.0, ["firstName": .string(b.1)]) }
        // One at a time, the first pass gives A the name B still holds in the new schema: B is brought forward.
        try expectConverged(bridged, "rename chain over three legacy saves, batch size \(batchSize)")
    }

    @Test(arguments: [1, BridgeConfiguration().batchSize])
    func aSwapAndAChainOnTheNewSideMirror(batchSize: Int) throws {
        let bridged = try bridged(batchSize: batchSize)
        let cars = try bridged.new.connection.rows("SELECT id, number_plate FROM car ORDER BY id LIMIT 2")
        try #require(cars.count == 2)
        guard case .text(let firstID) = cars[0][0], case .text(let secondID) = cars[1][0],
            case .text(let firstPlate) = cars[0][1], case .text(let secondPlate) = cars[1][1]
        else {
            Issue.record("cars without plates: \(cars)")
            return
        }
        let entity = { (id: String) throws -> String in
            try #require(try bridged.new.entityOfRow(id: id, rootEntity: "Car"))
        }
        let first = ObjectRef(entity: try entity(firstID), id: firstID)
        let second = ObjectRef(entity: try entity(secondID), id: secondID)
        // A swap in one save.
        try bridged.new.save(newApp) { save in
            try save.update(first, ["numberPlate": .string("(moving)")])
            try save.update(second, ["numberPlate": .string(firstPlate)])
            try save.update(first, ["numberPlate": .string(secondPlate)])
        }
        try expectConverged(bridged, "swap in one new-side save")
        // The same swap back over three saves, mirrored together.
        try bridged.new.save(newApp) { save in try save.update(first, ["numberPlate": .string("(moving)")]) }
        try bridged.new.save(newApp) { save in try save.update(second, ["numberPlate": .string(secondPlate)]) }
        try bridged.new.save(newApp) { save in try save.update(first, ["numberPlate": .string(firstPlate)]) }
        try expectConverged(bridged, "rename chain over three new-side saves, batch size \(batchSize)")
    }

    @Test func aValueGivenUpByADeletedObjectIsTakenInTheSameSave() throws {
        let bridged = try bridged()
        let people = try twoPeople(bridged.legacy)
        let (a, b) = (people[0], people[1])
        let lastName = try #require(try bridged.legacy.object(b.0)?.attributes["lastName"])
        try bridged.legacy.save(old) { save in
            try save.delete(b.0)
            try save.update(a.0, ["firstName": .string(b.1), "lastName": lastName])
        }
        try expectConverged(bridged, "a delete and the freed name taken in one save")
    }

    @Test func aDeleteInALaterTransactionIsBroughtForward() throws {
        let bridged = try bridged(batchSize: 1)
        let people = try twoPeople(bridged.legacy)
        let (a, b) = (people[0], people[1])
        let lastName = try #require(try bridged.legacy.object(b.0)?.attributes["lastName"])
        try bridged.legacy.save(old) { save in try save.update(a.0, ["firstName": .string("(moving)")]) }
        try bridged.legacy.save(old) { save in try save.delete(b.0) }
        try bridged.legacy.save(old) { save in
            try save.update(a.0, ["firstName": .string(b.1), "lastName": lastName])
        }
        // The first pass gives A the name B, deleted by the second transaction, still holds in the new schema.
        try expectConverged(bridged, "a delete brought forward")
        #expect(try bridged.engine.connection.scalar("SELECT count(*) FROM coexist_mirror") == .integer(3))
    }
}
