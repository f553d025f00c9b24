import CoexistCoreData
import CoexistSQLite
import Foundation
import TestSupport
import Testing

/// Core Data predicate forms, each fetched through the adapter from a real store and compared with the rows a
/// hand-written SQL query selects from the same file.
@Suite struct PredicateFixtureTests {
    let directory: TemporaryDirectory
    let cars: ManagedObjectContext
    let carsPath: String
    let photos: ManagedObjectContext
    let photosPath: String

    init() throws {
        directory = try TemporaryDirectory()
        carsPath = try directory.copy(Fixtures.sampleModelV2)
        cars = try ManagedObjectContext(storeAt: carsPath, readOnly: true)
        photosPath = try directory.copy(Fixtures.photos)
        photos = try ManagedObjectContext(storeAt: photosPath, readOnly: true)
    }

    /// The `Z_PK`s a fetch returns, in order.
    func fetched(
        _ context: ManagedObjectContext,
        _ entity: String,
        _ format: String,
        _ arguments: (any PredicateArgument)?...
    ) throws -> [Int64] {
        let request = FetchRequest<ManagedObject>(entityName: entity)
        request.predicate = try FetchPredicate(format: format, argumentArray: arguments)
        return try context.fetchObjectIDs(request).map { key($0) }
    }

    func key(_ id: ManagedObjectID) -> Int64 {
        Int64(id.uriRepresentation().lastPathComponent.dropFirst()) ?? -1
    }

    func selected(_ path: String, _ sql: String) throws -> [Int64] {
        try RawSQLite.rows(path, sql).map { $0[0].integerValue ?? -1 }
    }

    @Test func comparisonsAndStringOperators() throws {
        let cases: [(String, [(any PredicateArgument)?], String)] = [
            ("maker == %@", ["FIAT"], "ZMAKER = 'FIAT'"),
            ("maker = 'FIAT' AND numberPlate != nil", [], "ZMAKER = 'FIAT' AND ZNUMBERPLATE IS NOT NULL"),
            ("maker != %@", ["FIAT"], "ZMAKER IS NOT 'FIAT'"),
            ("%K BEGINSWITH[cd] %@", ["maker", "fi"], "lower(ZMAKER) LIKE 'fi%'"),
            ("maker BEGINSWITH %@", ["fi"], "0"),
            ("maker ENDSWITH 'ini'", [], "ZMAKER LIKE '%ini'"),
            ("maker CONTAINS[c] 'RA'", [], "lower(ZMAKER) LIKE '%ra%'"),
            ("maker LIKE[c] 'm*a?i'", [], "lower(ZMAKER) GLOB 'm*a?i'"),
            ("maker LIKE 'F?AT'", [], "ZMAKER GLOB 'F?AT'"),
            ("maker MATCHES '(BMW|Kia)'", [], "ZMAKER IN ('BMW', 'Kia')"),
            ("maker IN %@", [["BMW", "Kia", "Renault"]], "ZMAKER IN ('BMW', 'Kia', 'Renault')"),
            ("maker IN {'BMW', 'Kia'}", [], "ZMAKER IN ('BMW', 'Kia')"),
            (
                "NOT (maker == 'FIAT') OR numberPlate BEGINSWITH 'A'", [],
                "ZMAKER IS NOT 'FIAT' OR ZNUMBERPLATE LIKE 'A%'"
            ),
            (
                "!(maker == 'FIAT') && (model BEGINSWITH 'M' || model ENDSWITH 'a')", [],
                "ZMAKER IS NOT 'FIAT' AND (ZMODEL LIKE 'M%' OR ZMODEL LIKE '%a')"
            ),
            ("TRUEPREDICATE AND NOT FALSEPREDICATE", [], "1"),
        ]
        let total = try selected(carsPath, "SELECT count(*) FROM ZCAR")[0]
        for (format, arguments, condition) in cases {
            let expected = try selected(carsPath, "SELECT Z_PK FROM ZCAR WHERE \(condition) ORDER BY Z_PK")
            #expect(try fetched(cars, "Car", format, argumentArray: arguments) == expected, "\(format)")
            // Each case selects some rows but not all (the case-sensitive BEGINSWITH none, TRUEPREDICATE all).
            if condition != "0" && condition != "1" {
                #expect(expected.count > 0 && expected.count < total, "\(format)")
            }
        }
        let sport = FetchRequest<ManagedObject>(entityName: "LuxuryCar")
        sport.predicate = try FetchPredicate(format: "isLimitedEdition == YES")
        #expect(
            try cars.fetchObjectIDs(sport).map { key($0) }
                == selected(carsPath, "SELECT Z_PK FROM ZCAR WHERE Z_ENT = 3 AND ZISLIMITEDEDITION = 1 ORDER BY Z_PK")
        )
    }

    func fetched(
        _ context: ManagedObjectContext,
        _ entity: String,
        _ format: String,
        argumentArray: [(any PredicateArgument)?]
    ) throws -> [Int64] {
        let request = FetchRequest<ManagedObject>(entityName: entity)
        request.predicate = try FetchPredicate(format: format, argumentArray: argumentArray)
        return try context.fetchObjectIDs(request).map { key($0) }
    }

    @Test func keyPathsThroughToOnesAndToManys() throws {
        #expect(
            try fetched(cars, "Car", "owner.firstName == %@", "Bret")
                == selected(
                    carsPath,
                    "SELECT c.Z_PK FROM ZCAR c JOIN ZPERSON p ON p.Z_PK = c.ZOWNER WHERE p.ZFIRSTNAME = 'Bret' ORDER BY c.Z_PK"
                )
        )
        #expect(
            try fetched(cars, "Car", "owner == nil") == selected(carsPath, "SELECT Z_PK FROM ZCAR WHERE ZOWNER IS NULL")
        )
        let person = try #require(
            try RawSQLite.rows(carsPath, "SELECT Z_PK FROM ZPERSON WHERE Z_PK IN (SELECT ZOWNER FROM ZCAR) LIMIT 1")
                .first?[0].integerValue
        )
        let owner = try #require(
            cars.managedObjectID(
                forURIRepresentation: URL(string: "x-coredata://\(cars.storeIdentifier)/Person/p\(person)")!
            )
        )
        #expect(
            try fetched(cars, "Car", "owner == %@", owner)
                == selected(carsPath, "SELECT Z_PK FROM ZCAR WHERE ZOWNER = \(person) ORDER BY Z_PK")
        )
        let anyFIAT =
            "SELECT Z_PK FROM ZPERSON p WHERE EXISTS (SELECT 1 FROM ZCAR c WHERE c.ZOWNER = p.Z_PK AND c.ZMAKER = 'FIAT') ORDER BY Z_PK"
        #expect(try fetched(cars, "Person", "ANY cars.maker == %@", "FIAT") == selected(carsPath, anyFIAT))
        #expect(try fetched(cars, "Person", "SOME cars.maker == 'FIAT'") == selected(carsPath, anyFIAT))
        #expect(
            try fetched(cars, "Person", "ALL cars.maker == 'FIAT'")
                == selected(
                    carsPath,
                    "SELECT Z_PK FROM ZPERSON p WHERE NOT EXISTS (SELECT 1 FROM ZCAR c WHERE c.ZOWNER = p.Z_PK AND c.ZMAKER IS NOT 'FIAT') ORDER BY Z_PK"
                )
        )
        #expect(
            try fetched(cars, "Person", "NONE cars.maker == 'FIAT'")
                == selected(
                    carsPath,
                    "SELECT Z_PK FROM ZPERSON p WHERE NOT EXISTS (SELECT 1 FROM ZCAR c WHERE c.ZOWNER = p.Z_PK AND c.ZMAKER = 'FIAT') ORDER BY Z_PK"
                )
        )
        let countSQL =
            "SELECT Z_PK FROM ZPERSON p WHERE (SELECT count(*) FROM ZCAR c WHERE c.ZOWNER = p.Z_PK) > 5 ORDER BY Z_PK"
        #expect(try fetched(cars, "Person", "cars.@count > 5") == selected(carsPath, countSQL))
        #expect(!(try selected(carsPath, countSQL)).isEmpty)
        let car = try #require(
            try RawSQLite.rows(carsPath, "SELECT Z_PK FROM ZCAR WHERE ZOWNER = \(person) LIMIT 1").first?[0]
                .integerValue
        )
        let carID = try #require(
            cars.managedObjectID(forURIRepresentation: URL(string: "x-coredata://\(cars.storeIdentifier)/Car/p\(car)")!)
        )
        #expect(try fetched(cars, "Person", "cars CONTAINS %@", carID) == [person])
        #expect(try fetched(cars, "Person", "%@ IN cars", carID) == [person])
        #expect(try fetched(cars, "Car", "SELF IN %@", [carID]) == [car])
    }

    @Test func subEntities() throws {
        let all = FetchRequest<ManagedObject>(entityName: "SportCar")
        #expect(
            try cars.count(for: all)
                == (try selected(carsPath, "SELECT count(*) FROM ZCAR WHERE Z_ENT IN (2, 3)")).first.map(Int.init)
        )
        all.includesSubentities = false
        #expect(
            try cars.count(for: all)
                == (try selected(carsPath, "SELECT count(*) FROM ZCAR WHERE Z_ENT = 2")).first.map(Int.init)
        )
        let albums = try fetched(photos, "GenericAlbum", "title != nil")
        #expect(
            albums
                == (try selected(photosPath, "SELECT Z_PK FROM ZGENERICALBUM WHERE ZTITLE IS NOT NULL ORDER BY Z_PK"))
        )
        #expect(
            try fetched(photos, "Album", "title BEGINSWITH[c] 'test'")
                == selected(
                    photosPath,
                    "SELECT Z_PK FROM ZGENERICALBUM WHERE Z_ENT = 33 AND lower(ZTITLE) LIKE 'test%' ORDER BY Z_PK"
                )
        )
    }

    /// An identity naming the parent entity of its row's (a URI saying `Car` for an `ExpensiveSportCar`)
    /// answers for the entity it names: a key only the sub-entity has is unknown, as it is to `setValue`.
    @Test func anIdentityNamingTheParentEntityAnswersForThatEntity() throws {
        let pk = try #require(
            try RawSQLite.rows(carsPath, "SELECT Z_PK FROM ZCAR WHERE Z_ENT = 3 LIMIT 1").first?[0].integerValue
        )
        let id = try #require(
            cars.managedObjectID(forURIRepresentation: URL(string: "x-coredata://\(cars.storeIdentifier)/Car/p\(pk)")!)
        )
        let car = try cars.existingObject(with: id)
        #expect(car.value(forKey: "isLimitedEdition") == nil)
        guard case .unknownKey(entity: "Car", key: "isLimitedEdition") = car.lastAccessError else {
            Issue.record("\(String(describing: car.lastAccessError))")
            return
        }
        let model = try selected(carsPath, "SELECT ZMODEL IS NOT NULL FROM ZCAR WHERE Z_PK = \(pk)")
        #expect((car.value(forKey: "model") != nil) == (model == [1]))
        #expect(car.lastAccessError == nil)
    }

    @Test func joinTablesOnPhotos() throws {
        let keywordSQL = """
            SELECT a.Z_PK FROM ZADDITIONALASSETATTRIBUTES a WHERE EXISTS (SELECT 1 FROM Z_1KEYWORDS j
            JOIN ZKEYWORD k ON k.Z_PK = j.Z_52KEYWORDS WHERE j.Z_1ASSETATTRIBUTES = a.Z_PK AND lower(k.ZTITLE) LIKE 'lon%') ORDER BY a.Z_PK
            """
        let expected = try selected(photosPath, keywordSQL)
        #expect(!expected.isEmpty)
        #expect(
            try fetched(photos, "AdditionalAssetAttributes", "ANY keywords.title BEGINSWITH[c] %@", "LON") == expected
        )
        let assetSQL = """
            SELECT s.Z_PK FROM ZASSET s JOIN ZADDITIONALASSETATTRIBUTES a ON a.Z_PK = s.ZADDITIONALATTRIBUTES WHERE EXISTS (SELECT 1 FROM Z_1KEYWORDS j
            JOIN ZKEYWORD k ON k.Z_PK = j.Z_52KEYWORDS WHERE j.Z_1ASSETATTRIBUTES = a.Z_PK AND k.ZTITLE = 'London') ORDER BY s.Z_PK
            """
        #expect(
            try fetched(photos, "Asset", "ANY additionalAttributes.keywords.title == 'London'")
                == selected(photosPath, assetSQL)
        )
        let albumSQL =
            "SELECT g.Z_PK FROM ZGENERICALBUM g WHERE g.Z_ENT = 33 AND (SELECT count(*) FROM Z_33ASSETS j WHERE j.Z_33ALBUMS = g.Z_PK) >= 2 ORDER BY g.Z_PK"
        #expect(try fetched(photos, "Album", "assets.@count >= 2") == selected(photosPath, albumSQL))
        let favourites =
            "SELECT g.Z_PK FROM ZGENERICALBUM g WHERE g.Z_ENT = 33 AND EXISTS (SELECT 1 FROM Z_33ASSETS j JOIN ZASSET s ON s.Z_PK = j.Z_3ASSETS WHERE j.Z_33ALBUMS = g.Z_PK AND s.ZFAVORITE = 1) ORDER BY g.Z_PK"
        #expect(try fetched(photos, "Album", "ANY assets.favorite == YES") == selected(photosPath, favourites))
        let created = try #require(
            try RawSQLite.rows(photosPath, "SELECT ZDATECREATED FROM ZASSET ORDER BY ZDATECREATED LIMIT 1 OFFSET 5")
                .first?[0].numericValue
        )
        #expect(
            try fetched(photos, "Asset", "dateCreated > %@", Date(timeIntervalSinceReferenceDate: created))
                == selected(photosPath, "SELECT Z_PK FROM ZASSET WHERE ZDATECREATED > \(created) ORDER BY Z_PK")
        )
    }

    /// A to-many further down the path keeps the operator for its elements: CONTAINS stays a substring test.
    @Test func containsThroughTwoToManys() throws {
        let sql = """
            SELECT g.Z_PK FROM ZGENERICALBUM g WHERE g.Z_ENT = 33 AND EXISTS (SELECT 1 FROM Z_33ASSETS j
            JOIN ZASSET s ON s.Z_PK = j.Z_3ASSETS JOIN ZADDITIONALASSETATTRIBUTES a ON a.Z_PK = s.ZADDITIONALATTRIBUTES
            WHERE j.Z_33ALBUMS = g.Z_PK AND EXISTS (SELECT 1 FROM Z_1KEYWORDS k1 JOIN ZKEYWORD k ON k.Z_PK = k1.Z_52KEYWORDS
            WHERE k1.Z_1ASSETATTRIBUTES = a.Z_PK AND instr(lower(k.ZTITLE), 'edd') > 0)) ORDER BY g.Z_PK
            """
        let expected = try selected(photosPath, sql)
        #expect(!expected.isEmpty)
        #expect(
            try fetched(photos, "Album", "ANY assets.additionalAttributes.keywords.title CONTAINS[c] 'EDD'") == expected
        )
        // A predicate nested past the bound in code (not parsed) is a clear error too.
        var deep = FetchPredicate(value: true)
        for _ in 0..<1_000 { deep = .not(deep) }
        let request = FetchRequest<ManagedObject>(entityName: "Album")
        request.predicate = deep
        #expect(throws: CoreDataError.self) { try photos.fetch(request) }
    }

    @Test func sortLimitAndOffset() throws {
        let request = FetchRequest<ManagedObject>(entityName: "Car")
        request.predicate = try FetchPredicate(format: "owner != nil")
        request.sortDescriptors = [
            FetchSortDescriptor(key: "owner.lastName", ascending: false), FetchSortDescriptor(key: "maker"),
        ]
        request.fetchLimit = 7
        request.fetchOffset = 3
        let sql = """
            SELECT c.Z_PK FROM ZCAR c LEFT JOIN ZPERSON p ON p.Z_PK = c.ZOWNER WHERE c.ZOWNER IS NOT NULL
            ORDER BY p.ZLASTNAME DESC, c.ZMAKER, c.Z_PK LIMIT 7 OFFSET 3
            """
        #expect(try cars.fetchObjectIDs(request).map { key($0) } == selected(carsPath, sql))
        let objects = try cars.fetch(request)
        #expect(objects.count == 7)
        #expect(objects.allSatisfy { $0.value(forKey: "maker") is String })
    }

    @Test func badFormatsAndKeysAreClearErrors() throws {
        let parse: [(String, String)] = [
            ("maker ==", "expected a key path or a value"),
            ("maker == 'FIAT", "unterminated string"),
            ("maker == %@", "more format specifiers than arguments"),
            ("maker === 'x'", "expected a key path or a value"),
            ("maker == $NAME", "substitution variables"),
            ("SUBQUERY(cars, $c, $c.maker == 'x').@count > 0", "not supported"),
        ]
        for (format, reason) in parse {
            do {
                _ = try FetchPredicate(format: format)
                Issue.record("\(format) parsed")
            } catch {
                #expect("\(error)".contains(reason), "\(format): \(error)")
            }
        }
        let request = FetchRequest<ManagedObject>(entityName: "Car")
        request.predicate = try FetchPredicate(format: "colour == 'red'")
        #expect(throws: CoreDataError.self) { try cars.fetch(request) }
        request.predicate = try FetchPredicate(format: "maker > 3 AND ANY maker == 'x'")
        #expect(throws: CoreDataError.self) { try cars.fetch(request) }
        #expect(throws: CoreDataError.self) { try cars.fetch(FetchRequest<ManagedObject>(entityName: "Bicycle")) }
    }

    @Test func readingLeavesTheFilesByteIdentical() throws {
        let before = try directory.contents()
        _ = try fetched(cars, "Person", "ANY cars.maker ==[cd] 'fiat'")
        _ = try fetched(photos, "Album", "assets.@count > 0")
        #expect(try directory.contents() == before)
    }
}
