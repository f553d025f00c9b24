import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistSQLite
import CoexistStore

/// What a writer does to a CoreDataPlus `SampleModel` store (Person unique on firstName + lastName, Car on
/// numberPlate, Car → SportCar → ExpensiveSportCar, nullify both ways), through either stack.
protocol SampleSide {
    associatedtype Key: Hashable
    /// People with their names, cars with their plates, as committed now.
    func people() throws -> [(key: Key, first: String, last: String)]
    func cars() throws -> [(key: Key, plate: String)]
    /// One save; `body` gets the operations.
    func save(_ author: String, _ body: (SampleOperations<Key>) throws -> Void) throws
}

/// The operations of one save.
struct SampleOperations<Key: Hashable> {
    var insertPerson: (_ first: String, _ last: String) throws -> Key
    var insertCar: (_ entity: String, _ plate: String, _ owner: Key?) throws -> Key
    var rename: (_ person: Key, _ first: String, _ last: String) throws -> Void
    var setPlate: (_ car: Key, _ plate: String) throws -> Void
    var setOwner: (_ car: Key, _ owner: Key?) throws -> Void
    var delete: (_ object: Key) throws -> Void
}

/// Random saves on `SampleModel`, and among them the moves of unique values a bridge must not trip over:
/// a person taking the name another gave up in the same save, two people or two cars swapping in one
/// save, chains over consecutive saves. Each writer draws its names and plates from its own pool (`tag`),
/// and moves between objects only values of that pool, so the two sides never claim one value
/// independently (that would be a real conflict, not the bridge's); a save the writer's own side refuses
/// (a value still taken, an object the other side deleted) is counted, not fatal.
enum SampleWriters {
    /// `count` saves on `side`; `entities`: Car and its sub-entities, of which new cars are.
    static func run<Side: SampleSide>(
        _ side: Side,
        entities: [String],
        count: Int,
        author: String,
        tag: String,
        seed: UInt64
    ) throws -> (saved: Int, refused: Int) {
        var random = Random(state: seed)
        let tag = tag + "#"
        let own = { (value: String) in value.hasPrefix(tag) }
        var saved = 0
        var refused = 0
        for step in 0..<count {
            let people = try side.people()
            let cars = try side.cars()
            let name = { (index: Int) in ("\(tag)\(index % 7)", "\(tag)-\(index / 7)") }
            let choice = random.below(20)
            let a = RandomWriters.pick(people, &random)
            let b = RandomWriters.pick(people, &random)
            let car = RandomWriters.pick(cars, &random)
            let other = RandomWriters.pick(cars, &random)
            let fresh = name(random.below(400))
            let plate = "\(tag)-\(random.below(400))"
            let entity = entities[random.below(entities.count)]
            do {
                try side.save(author) { op in
                    switch choice {
                    case 0..<3: _ = try op.insertPerson(fresh.0, fresh.1)
                    case 3..<6: _ = try op.insertCar(entity, plate, a?.key)
                    case 6..<9:
                        // A takes a fresh name, B takes the one A gave up: a chain inside one save.
                        guard let a, let b, a.key != b.key, own(a.first) else { return }
                        try op.rename(a.key, fresh.0, fresh.1)
                        try op.rename(b.key, a.first, a.last)
                    case 9..<11:
                        // A swap of two people's names in one save.
                        guard let a, let b, a.key != b.key, own(a.first), own(b.first) else { return }
                        try op.rename(a.key, "\(tag)(moving)", "\(step)")
                        try op.rename(b.key, a.first, a.last)
                        try op.rename(a.key, b.first, b.last)
                    case 11..<13:
                        // A swap of two cars' plates in one save.
                        guard let car, let other, car.key != other.key, own(car.plate), own(other.plate) else {
                            return
                        }
                        try op.setPlate(car.key, "\(tag)(moving)\(step)")
                        try op.setPlate(other.key, car.plate)
                        try op.setPlate(car.key, other.plate)
                    case 13..<15:
                        if let car { try op.setPlate(car.key, plate) }
                    case 15..<17:
                        if let car { try op.setOwner(car.key, RandomWriters.pick(people, &random)?.key) }
                    case 17..<19:
                        if let car { try op.delete(car.key) }
                    default:
                        if let a { try op.delete(a.key) }  // its cars' owner is nullified
                    }
                }
                saved += 1
            } catch {
                refused += 1
            }
        }
        return (saved, refused)
    }
}

/// `SampleModel` through the legacy store.
struct LegacySampleSide: SampleSide {
    let store: LegacyStore

    func people() throws -> [(key: ObjectID, first: String, last: String)] {
        try store.objects(of: "Person").map {
            ($0.id, $0.attributes["firstName"]?.text ?? "", $0.attributes["lastName"]?.text ?? "")
        }
    }

    func cars() throws -> [(key: ObjectID, plate: String)] {
        try store.objects(of: "Car").map { ($0.id, $0.attributes["numberPlate"]?.text ?? "") }
    }

    func save(_ author: String, _ body: (SampleOperations<ObjectID>) throws -> Void) throws {
        try store.save(SaveMetadata(author: author, processName: "sample-writer")) { save in
            try body(
                SampleOperations(
                    insertPerson: { first, last in
                        try save.insert(
                            "Person",
                            [
                                "id": .uuid(UUIDText.randomBytes()), "firstName": .string(first),
                                "lastName": .string(last), "updatedAt": .date(0),
                            ]
                        )
                    },
                    insertCar: { entity, plate, owner in
                        let car = try save.insert(entity, ["numberPlate": .string(plate), "maker": .string("m")])
                        if let owner { try save.setToOne(car, "owner", owner) }
                        return car
                    },
                    rename: { person, first, last in
                        try save.update(person, ["firstName": .string(first), "lastName": .string(last)])
                    },
                    setPlate: { car, plate in try save.update(car, ["numberPlate": .string(plate)]) },
                    setOwner: { car, owner in try save.setToOne(car, "owner", owner) },
                    delete: { object in try save.delete(object) }
                )
            )
        }
    }
}

/// `SampleModel` through the new store.
struct NewSampleSide: SampleSide {
    let store: NewStore

    func people() throws -> [(key: ObjectRef, first: String, last: String)] {
        try store.refs(of: "Person").map { ref in
            let values = try store.values(of: ref) ?? [:]
            return (ref, values["firstName"]?.text ?? "", values["lastName"]?.text ?? "")
        }
    }

    func cars() throws -> [(key: ObjectRef, plate: String)] {
        try store.refs(of: "Car").map { ref in (ref, try store.values(of: ref)?["numberPlate"]?.text ?? "") }
    }

    func save(_ author: String, _ body: (SampleOperations<ObjectRef>) throws -> Void) throws {
        try store.save(SaveMetadata(author: author, processName: "sample-writer")) { save in
            try body(
                SampleOperations(
                    insertPerson: { first, last in
                        try save.insert(
                            "Person",
                            ["firstName": .string(first), "lastName": .string(last), "updatedAt": .date(0)]
                        )
                    },
                    insertCar: { entity, plate, owner in
                        let car = try save.insert(entity, ["numberPlate": .string(plate), "maker": .string("m")])
                        if let owner { try save.setToOne(car, "owner", owner) }
                        return car
                    },
                    rename: { person, first, last in
                        try save.update(person, ["firstName": .string(first), "lastName": .string(last)])
                    },
                    setPlate: { car, plate in try save.update(car, ["numberPlate": .string(plate)]) },
                    setOwner: { car, owner in try save.setToOne(car, "owner", owner) },
                    delete: { object in try save.delete(object) }
                )
            )
        }
    }
}

extension AttributeValue {
    /// The string, or nil.
    fileprivate var text: String? {
        if case .string(let text) = self { return text }
        return nil
    }
}
