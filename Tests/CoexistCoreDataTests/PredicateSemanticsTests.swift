import CoexistCoreData
import CoexistSQLite
import Foundation
import TestSupport
import Testing

/// What NSPredicate means, where a literal translation to SQL would mean something else: membership in a
/// to-many's values, key paths on the right of ANY, whole-text MATCHES, object identities of other
/// entities or stores, nil == nil, empty search strings; and formats that must fail cleanly. Each checked
/// on a writable copy of the CoreDataPlus SampleModel V2 store against hand-written SQL.
@Suite struct PredicateSemanticsTests {
    let directory: TemporaryDirectory
    let path: String
    let cars: ManagedObjectContext
    /// A car whose model is set to its owner's first name (for key paths on the right of ANY), and one
    /// whose model and number plate are both nil.
    let namedAfterOwner: Int64
    let bothNil: Int64

    init() throws {
        directory = try TemporaryDirectory()
        path = try directory.copy(Fixtures.sampleModelV2)
        let owned = try RawSQLite.rows(path, "SELECT Z_PK FROM ZCAR WHERE ZOWNER IS NOT NULL ORDER BY Z_PK LIMIT 2")
        namedAfterOwner = try #require(owned.first?[0].integerValue)
        bothNil = try #require(owned.last?[0].integerValue)
        try RawSQLite.execute(
            path,
            """
            UPDATE ZCAR SET ZMODEL = (SELECT ZFIRSTNAME FROM ZPERSON WHERE ZPERSON.Z_PK = ZCAR.ZOWNER)
                WHERE Z_PK = \(namedAfterOwner);
            UPDATE ZCAR SET ZMODEL = NULL, ZNUMBERPLATE = NULL WHERE Z_PK = \(bothNil);
            """
        )
        cars = try ManagedObjectContext(storeAt: path)
    }

    func fetched(_ entity: String, _ format: String, _ arguments: (any PredicateArgument)?...) throws -> [Int64] {
        let request = FetchRequest<ManagedObject>(entityName: entity)
        request.predicate = try FetchPredicate(format: format, argumentArray: arguments)
        return try cars.fetchObjectIDs(request).map {
            Int64($0.uriRepresentation().lastPathComponent.dropFirst()) ?? -1
        }
    }

    func selected(_ sql: String) throws -> [Int64] {
        try RawSQLite.rows(path, sql).map { $0[0].integerValue ?? -1 }
    }

    @Test func aValueInAToManysValuesIsEqualityPerElement() throws {
        let anyFIAT = try selected(
            "SELECT Z_PK FROM ZPERSON p WHERE EXISTS (SELECT 1 FROM ZCAR c WHERE c.ZOWNER = p.Z_PK AND c.ZMAKER = 'FIAT') ORDER BY Z_PK"
        )
        #expect(!anyFIAT.isEmpty)
        #expect(try fetched("Person", "%@ IN cars.maker", "FIAT") == anyFIAT)
        #expect(try fetched("Person", "%@ IN cars.maker", "FIA") == [])
        #expect(try fetched("Person", "cars.maker CONTAINS %@", "FIA") == [])
        #expect(try fetched("Person", "cars.maker CONTAINS %@", "FIAT") == anyFIAT)
        // With a quantifier the operator applies to each element: a substring test.
        #expect(try fetched("Person", "ANY cars.maker CONTAINS %@", "FIA") == anyFIAT)
        // On a string attribute, IN with a string on its right stays a substring test, as in NSPredicate.
        #expect(
            try fetched("Car", "%@ IN maker", "IA")
                == selected("SELECT Z_PK FROM ZCAR WHERE instr(ZMAKER, 'IA') > 0 ORDER BY Z_PK")
        )
    }

    @Test func aKeyPathOnTheRightOfANYIsTheFetchedObjects() throws {
        let expected = try selected(
            "SELECT Z_PK FROM ZPERSON p WHERE EXISTS (SELECT 1 FROM ZCAR c WHERE c.ZOWNER = p.Z_PK AND c.ZMODEL = p.ZFIRSTNAME) ORDER BY Z_PK"
        )
        #expect(expected.count == 1)
        #expect(try fetched("Person", "ANY cars.model == firstName") == expected)
        #expect(
            try fetched("Person", "NONE cars.model ==[c] firstName")
                == selected(
                    "SELECT Z_PK FROM ZPERSON p WHERE NOT EXISTS (SELECT 1 FROM ZCAR c WHERE c.ZOWNER = p.Z_PK AND lower(c.ZMODEL) = lower(p.ZFIRSTNAME)) ORDER BY Z_PK"
                )
        )
        // firstName is a Person's, not a Car's: resolving it on the car would be an error.
        #expect(throws: CoreDataError.self) { try fetched("Person", "ANY cars.model == maker") }
    }

    @Test func matchesIsAWholeTextMatch() throws {
        let fiat = try selected("SELECT Z_PK FROM ZCAR WHERE ZMAKER = 'FIAT' ORDER BY Z_PK")
        #expect(fiat.count > 100)
        #expect(try fetched("Car", "maker MATCHES %@", "FIA|FIAT") == fiat)
        #expect(try fetched("Car", "maker MATCHES %@", "FIA") == [])
        #expect(try fetched("Car", "maker MATCHES[c] %@", "fia.") == fiat)
        #expect(throws: CoreDataError.self) { try fetched("Car", "maker MATCHES %@", "a)|(b") }
    }

    @Test func objectsOfAnotherEntityOrStoreMatchNothing() throws {
        let owner = try #require(
            try selected("SELECT ZOWNER FROM ZCAR WHERE Z_PK = \(namedAfterOwner)").first
        )
        let person = try #require(
            cars.managedObjectID(forURIRepresentation: uri(cars.storeIdentifier, "Person", owner))
        )
        let owned = try selected("SELECT Z_PK FROM ZCAR WHERE ZOWNER = \(owner) ORDER BY Z_PK")
        #expect(try fetched("Car", "owner == %@", person) == owned)
        // A car's identity with the person's key names no person.
        let car = try #require(cars.managedObjectID(forURIRepresentation: uri(cars.storeIdentifier, "Car", owner)))
        #expect(try fetched("Car", "owner == %@", car) == [])
        #expect(try fetched("Car", "owner IN %@", [car, person]) == owned)
        // The same key in another store (a copy with another Z_UUID) names no row of this one.
        let otherPath = try directory.copy(Fixtures.sampleModelV2, as: "Other.sqlite")
        try RawSQLite.execute(otherPath, "UPDATE Z_METADATA SET Z_UUID = '00000000-0000-4000-8000-000000000001'")
        let other = try ManagedObjectContext(storeAt: otherPath, readOnly: true)
        let foreign = try #require(
            other.managedObjectID(forURIRepresentation: uri(other.storeIdentifier, "Person", owner))
        )
        #expect(try fetched("Car", "owner == %@", foreign) == [])
        #expect(
            try fetched("Car", "owner != %@", foreign)
                == selected("SELECT Z_PK FROM ZCAR ORDER BY Z_PK")
        )
    }

    func uri(_ store: String, _ entity: String, _ key: Int64) -> URL {
        URL(string: "x-coredata://\(store)/\(entity)/p\(key)")!
    }

    @Test func nilEqualsNilBetweenTwoAttributes() throws {
        #expect(try fetched("Car", "model == numberPlate") == [bothNil])
        #expect(try fetched("Car", "model != numberPlate").count == (try selected("SELECT count(*) FROM ZCAR")[0]) - 1)
    }

    @Test func anEmptySearchStringMatchesNothing() throws {
        for format in ["maker BEGINSWITH ''", "maker ENDSWITH ''", "maker CONTAINS ''", "maker CONTAINS[cd] %@"] {
            let arguments: [(any PredicateArgument)?] = format.hasSuffix("%@") ? [""] : []
            let request = FetchRequest<ManagedObject>(entityName: "Car")
            request.predicate = try FetchPredicate(format: format, argumentArray: arguments)
            #expect(try cars.count(for: request) == 0, "\(format)")
        }
        #expect(try fetched("Car", "NOT (maker CONTAINS '')").count == (try selected("SELECT count(*) FROM ZCAR")[0]))
        #expect(
            try fetched("Car", "maker BEGINSWITH 'F'")
                == selected("SELECT Z_PK FROM ZCAR WHERE substr(ZMAKER, 1, 1) = 'F' ORDER BY Z_PK")
        )
    }

    @Test func malformedAndDeeplyNestedFormatsFailCleanly() throws {
        let depth = 10_000
        let formats = [
            "maker == @", "cars.@", "maker == 'x' AND @", "@",
            String(repeating: "(", count: depth) + "maker == 'x'" + String(repeating: ")", count: depth),
            String(repeating: "NOT ", count: depth) + "maker == 'x'",
            "maker IN " + String(repeating: "{", count: depth) + String(repeating: "}", count: depth),
        ]
        for format in formats {
            #expect(throws: CoreDataError.self, "\(format.prefix(20))") { try FetchPredicate(format: format) }
        }
        let nested = String(repeating: "(", count: 50) + "maker == 'FIAT'" + String(repeating: ")", count: 50)
        #expect(
            try fetched("Car", nested).count == (try selected("SELECT count(*) FROM ZCAR WHERE ZMAKER = 'FIAT'")[0])
        )
    }

    @Test func countLeavesOutObjectsDeletedInTheContext() throws {
        let request = FetchRequest<ManagedObject>(entityName: "Car")
        request.predicate = try FetchPredicate(format: "maker == 'BMW'")
        let bmws = try cars.fetch(request)
        #expect(bmws.count == 2)
        cars.delete(bmws[0])
        #expect(try cars.count(for: request) == 1)
        #expect(try cars.fetch(request).count == 1)
        cars.rollback()
        #expect(try cars.count(for: request) == 2)
    }
}
