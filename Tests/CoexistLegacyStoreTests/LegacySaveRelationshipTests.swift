import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistSQLite
import TestSupport
import Testing

@Suite struct LegacySaveRelationshipTests {
    let author = SaveMetadata(author: "tests")

    @Test func createdLayoutResolvesBack() throws {
        let directory = try TemporaryDirectory()
        let store = try LibraryModel.createStore(in: directory)
        let book = try #require(store.schema?.entities["Book"])
        #expect(book.properties["shelf"] == .toOne(column: "ZSHELF", entityColumn: nil, orderColumn: "Z_FOK_SHELF"))
        #expect(
            book.properties["tags"]
                == .joinTable(
                    table: "Z_1TAGS",
                    sourceColumn: "Z_1BOOKS",
                    destinationColumn: "Z_5TAGS",
                    orderColumn: "Z_FOK_5TAGS"
                )
        )
        let cover = try #require(store.schema?.entities["Cover"])
        #expect(cover.properties["book"] == .toOne(column: "ZBOOK", entityColumn: "Z1_BOOK", orderColumn: nil))
        #expect(store.schema?.entities["Comic"]?.table == "ZBOOK")
    }

    @Test func orderedOneToManyAndDeny() throws {
        let directory = try TemporaryDirectory()
        let store = try LibraryModel.createStore(in: directory)
        var shelf = ObjectID(entity: "Shelf", pk: 0)
        var books: [ObjectID] = []
        try store.save(author) { save in
            shelf = try save.insert("Shelf", ["label": .string("A")])
            for index in 0..<3 {
                books.append(try save.insert(index == 1 ? "Comic" : "Book", ["title": .string("b\(index)")]))
            }
            try save.add(shelf, to: "books", books)
        }
        #expect(try store.related(shelf, "books") == books)
        try store.save(author) { save in try save.setOrdered(shelf, "books", [books[2], books[0], books[1]]) }
        #expect(try store.related(shelf, "books") == [books[2], books[0], books[1]])
        let deny = #expect(throws: LegacyStoreError.self) { try store.save(author) { save in try save.delete(shelf) } }
        #expect(
            deny?.description.contains(
                "cannot delete Shelf/p1: its relationship books (delete rule Deny) still holds Book/p"
            ) == true
        )
        try store.save(author) { save in
            try save.remove(shelf, from: "books", books)
            try save.delete(shelf)
        }
        #expect(try store.objects(of: "Book").allSatisfy { $0.toOne["shelf"] == nil })
    }

    @Test func orderedManyToManyKeepsBothSides() throws {
        let directory = try TemporaryDirectory()
        let store = try LibraryModel.createStore(in: directory)
        var book = ObjectID(entity: "Book", pk: 0)
        var tags: [ObjectID] = []
        let result = try store.save(author) { save in
            book = try save.insert("Book", ["title": .string("t")])
            tags = try ["x", "y", "z"].map { try save.insert("Tag", ["name": .string($0)]) }
            try save.add(book, to: "tags", [tags[1], tags[0]])
            try save.add(tags[2], to: "books", [book])
        }
        #expect(result.changes.allSatisfy { $0.type == .insert })
        #expect(try store.related(book, "tags") == [tags[1], tags[0], tags[2]])
        #expect(try store.related(tags[2], "books") == [book])
        let update = try store.save(author) { save in try save.remove(book, from: "tags", [tags[0]]) }
        #expect(
            update.changes.map { "\($0.entity ?? "")/\($0.properties ?? [])" } == [
                "Book/[\"tags\"]", "Tag/[\"books\"]",
            ]
        )
        #expect(try store.related(tags[0], "books").isEmpty)
        let cleanup = try store.save(author) { save in try save.delete(tags[1]) }
        #expect(cleanup.changes.map(\.type) == [.update, .delete])
        #expect(try store.related(book, "tags") == [tags[2]])
    }

    @Test func oneToOneMovesAndCascades() throws {
        let directory = try TemporaryDirectory()
        let store = try LibraryModel.createStore(in: directory)
        var first = ObjectID(entity: "Book", pk: 0)
        var second = ObjectID(entity: "Comic", pk: 0)
        var cover = ObjectID(entity: "Cover", pk: 0)
        try store.save(author) { save in
            first = try save.insert("Book", ["title": .string("1")])
            second = try save.insert("Comic", ["title": .string("2"), "artist": .string("Hergé")])
            cover = try save.insert("Cover", ["color": .string("red")])
            try save.setToOne(first, "cover", cover)
        }
        #expect(try store.object(cover)?.toOne["book"] == first)
        // Moving the cover to the comic takes it from the first book; the polymorphic key names a Comic.
        try store.save(author) { save in try save.setToOne(cover, "book", second) }
        #expect(try store.object(first)?.toOne["cover"] == nil)
        #expect(try store.object(second)?.toOne["cover"] == cover)
        #expect(try store.object(cover)?.toOne["book"] == second)
        #expect(try store.connection.scalar("SELECT Z1_BOOK FROM ZCOVER") == .integer(2))
        let deleted = try store.save(author) { save in try save.delete(second) }
        #expect(deleted.changes.map(\.type) == [.delete, .delete])
        #expect(deleted.changes.first?.tombstone == ["artist": .string("Hergé"), "isbn": .null])
        #expect(try store.objects(of: "Cover").isEmpty)
    }

    @Test func uniquenessConstraintsAreEnforced() throws {
        let directory = try TemporaryDirectory()
        let store = try LibraryModel.createStore(in: directory)
        try store.save(author) { save in try save.insert("Tag", ["name": .string("x")]) }
        let error = #expect(throws: LegacyStoreError.self) {
            try store.save(author) { save in try save.insert("Tag", ["name": .string("x")]) }
        }
        #expect(error?.description.contains("uniqueness constraint (name) of Tag is already held by Tag/p1") == true)
    }

    @Test func realStoreUniquenessAndInheritance() throws {
        let directory = try TemporaryDirectory()
        let store = try DemoStore.writableCopy(of: Fixtures.sampleModelV1, in: directory)
        let person = try #require(store.objects(of: "Person").first)
        let error = #expect(throws: LegacyStoreError.self) {
            try store.save(author) { save in
                try save.insert(
                    "Person",
                    [
                        "firstName": person.attributes["firstName"] ?? .null,
                        "lastName": person.attributes["lastName"] ?? .null,
                        "id": DemoStore.uuid(9), "updatedAt": .date(0),
                    ]
                )
            }
        }
        #expect(error?.description.contains("firstName, lastName") == true)
    }
}

@Suite struct LegacySaveAtomicityTests {
    let author = SaveMetadata(author: "tests")

    /// A failed operation inside a save rolls back alone: the caller may catch it and go on.
    @Test func aCaughtFailureLeavesTheSaveConsistent() throws {
        let directory = try TemporaryDirectory()
        let store = try LibraryModel.createStore(in: directory)
        var shelf = ObjectID(entity: "Shelf", pk: 0)
        var book = ObjectID(entity: "Book", pk: 0)
        try store.save(author) { save in
            shelf = try save.insert("Shelf", ["label": .string("A")])
            book = try save.insert("Book", ["title": .string("b")])
            try save.add(shelf, to: "books", [book])
        }
        let result = try store.save(author) { save in
            #expect(throws: LegacyStoreError.self) { try save.delete(shelf) }  // Deny: refused
            try save.update(shelf, ["label": .string("B")])
        }
        #expect(result.changes.map(\.type) == [.update])
        #expect(try store.related(shelf, "books") == [book])
        #expect(try store.object(shelf)?.attributes["label"] == .string("B"))
        #expect(try store.object(shelf)?.version == 2)
    }

    /// Failed operations late in a large save undo exactly what they changed: a cascade that removed
    /// objects inserted earlier in the save, a version read, a bump. The save then writes what succeeded.
    @Test func failuresLateInALargeSaveUndoOnlyThemselves() throws {
        let directory = try TemporaryDirectory()
        let store = try LibraryModel.createStore(in: directory)
        var shelf = ObjectID(entity: "Shelf", pk: 0)
        try store.save(author) { save in shelf = try save.insert("Shelf", ["label": .string("A")]) }
        var kept: [ObjectID] = []
        let result = try store.save(author) { save in
            for index in 0..<2_000 { kept.append(try save.insert("Book", ["title": .string("b\(index)")])) }
            let book = try save.insert("Book", ["title": .string("on the shelf")])
            try save.add(shelf, to: "books", [book])
            // Deny: the shelf holds a book; nothing of the attempt stays.
            #expect(throws: LegacyStoreError.self) { try save.delete(shelf) }
            #expect(throws: LegacyStoreError.self) { try save.update(shelf, ["nothing": .string("x")]) }
            try save.remove(shelf, from: "books", [book])
            try save.delete(book)
            try save.update(shelf, ["label": .string("B")])
        }
        #expect(result.changes.filter { $0.type == .insert }.count == 2_000)
        #expect(result.changes.filter { $0.type == .update }.map(\.objectPK) == [shelf.pk])
        #expect(try store.objects(of: "Book").count == 2_000)
        #expect(try store.object(shelf)?.attributes["label"] == .string("B"))
        #expect(try store.object(shelf)?.version == 2)
    }

    @Test func aSaveCannotBeUsedAfterItsClosure() throws {
        let directory = try TemporaryDirectory()
        let store = try LibraryModel.createStore(in: directory)
        var escaped: LegacySave?
        try store.save(author) { save in escaped = save }
        let save = try #require(escaped)
        #expect(throws: LegacyStoreError.self) { try save.insert("Shelf", ["label": .string("late")]) }
        #expect(try store.objects(of: "Shelf").isEmpty)
    }

    @Test func anObjectDeletedInTheSaveCannotBeReferenced() throws {
        let directory = try TemporaryDirectory()
        let store = try LibraryModel.createStore(in: directory)
        try store.save(author) { save in
            let book = try save.insert("Book", ["title": .string("b")])
            let cover = try save.insert("Cover", [:])
            try save.delete(book)
            #expect(throws: LegacyStoreError.self) { try save.setToOne(cover, "book", book) }
            #expect(throws: LegacyStoreError.self) { try save.update(book, ["title": .string("x")]) }
        }
        #expect(try store.objects(of: "Cover").first?.toOne["book"] == nil)
    }
}
