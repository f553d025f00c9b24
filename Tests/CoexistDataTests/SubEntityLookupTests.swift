import CoexistStore
import TestSupport
import Testing

@testable import CoexistData

/// A book of the library model (a super-entity: its table holds its comics too).
final class LibraryBook: PersistentModel {
    var title = ""
    static let schema = RecordSchema<LibraryBook>(entity: "Book", [.attribute("title", \.title)])
    required init() {}
}

/// A comic: a book with an artist.
final class LibraryComic: PersistentModel {
    var title = ""
    var artist = ""
    static let schema = RecordSchema<LibraryComic>(
        entity: "Comic",
        [.attribute("title", \.title), .attribute("artist", \.artist)]
    )
    required init() {}
}

/// A record looked up by its super-entity's identifier is the one of its concrete entity: the held one, or
/// one loaded once.
@Suite struct SubEntityLookupTests {
    @Test func aRecordLookedUpByItsSuperEntityIsTheOneOfItsOwnEntity() throws {
        let directory = try TemporaryDirectory()
        let shared = try SharedStore.createLibrary(in: directory)
        let writer = try ModelContext(shared.new)
        let comic = LibraryComic()
        comic.title = "Tintin"
        comic.artist = "Hergé"
        writer.insert(comic)
        try writer.save()
        let identifier = try #require(writer.persistentIdentifier(of: comic))
        #expect(identifier.entity == "Comic")
        let bySuperEntity = PersistentIdentifier(entity: "Book", id: identifier.id)

        // Held: the same record, nothing made.
        let held = writer.registrations.count
        #expect(try writer.model(for: bySuperEntity, as: LibraryComic.self) === comic)
        #expect(writer.registrations.count == held)

        // Not held: loaded once, then given again by either identifier.
        let reader = try ModelContext(shared.new)
        let loaded = try #require(try reader.model(for: bySuperEntity, as: LibraryComic.self))
        #expect(loaded.title == "Tintin" && loaded.artist == "Hergé")
        #expect(try reader.model(for: identifier, as: LibraryComic.self) === loaded)
        #expect(try reader.model(for: bySuperEntity, as: LibraryComic.self) === loaded)
        #expect(reader.registrations.count == 1)
    }
}
