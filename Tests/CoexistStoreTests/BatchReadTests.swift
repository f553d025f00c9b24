import CoexistHistory
import CoexistSQLite
import CoexistStore
import TestSupport
import Testing

/// Batched reads answer each owner for itself: objects of different entities may share an identity (a
/// Shelf and a Tag below), and both have a relationship named `books`.
@Suite struct BatchReadTests {
    @Test func ownersSharingAnIdentityAreAnsweredEachForItself() throws {
        let directory = try TemporaryDirectory()
        let store = try SharedStore.createLibrary(in: directory).new
        let shared = "0b7c6a52-8d1e-4c1f-9a4e-2f4de1c0a001"
        var shelf = ObjectRef(entity: "Shelf", id: "")
        var tag = ObjectRef(entity: "Tag", id: "")
        var books: [ObjectRef] = []
        try store.save(SaveMetadata(author: "test")) { save in
            shelf = try save.insert("Shelf", id: shared, ["label": .string("Fiction")])
            tag = try save.insert("Tag", id: shared, ["name": .string("classic")])
            books = try (1...3).map { try save.insert("Book", id: nil, ["title": .string("Book \($0)")]) }
            try save.setOrdered(shelf, "books", [books[0], books[1]])
            try save.add(tag, to: "books", [books[2]])
        }
        let related = try store.related([shelf, tag], "books")
        #expect(related[shelf] == [books[0], books[1]])
        #expect(related[tag] == [books[2]])
        var rows: [ObjectRef] = []
        try store.forEachRow(of: [shelf, tag]) { ref, _ in rows.append(ref) }
        #expect(Set(rows) == [shelf, tag])
    }
}
