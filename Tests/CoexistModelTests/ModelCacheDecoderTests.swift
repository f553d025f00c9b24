import CoexistModel
import CoexistSQLite
import TestSupport
import Testing

@Suite struct ModelCacheDecoderTests {
    func cachedModel(_ store: String) throws -> Model {
        let bytes = try #require(RawSQLite.rows(store, "SELECT Z_CONTENT FROM Z_MODELCACHE")[0][0].blobValue)
        return try ModelCacheDecoder(source: store).decode(compressed: bytes)
    }

    /// The model a store carries equals the model file it was made from (issue acceptance).
    @Test(arguments: [
        (Fixtures.sampleModelV1, Fixtures.sampleModelXcdatamodeld + "/SampleModel.xcdatamodel"),
        (Fixtures.moody, Fixtures.moodyXcdatamodeld + "/Moody.xcdatamodel"),
    ])
    func cacheEqualsModelFile(store: String, modelFile: String) throws {
        let fromCache = try cachedModel(store)
        let fromFile = try XCDataModelReader.read(path: modelFile)
        #expect(fromCache.structuralDifferences(from: fromFile) == [])
        #expect(fromCache.entities.map(\.name) == fromFile.entities.map(\.name))
        #expect(fromCache.entities.count >= 2)
    }

    @Test func differencesAreDetected() throws {
        let fromCache = try cachedModel(Fixtures.sampleModelV1)
        let other = try XCDataModelReader.read(path: Fixtures.moodyXcdatamodeld + "/Moody.xcdatamodel")
        #expect(!fromCache.structuralDifferences(from: other).isEmpty)
    }

    @Test func photosModelDecodesWithFlags() throws {
        let model = try cachedModel(Fixtures.photos)
        #expect(model.entities.count > 60)
        let person = try #require(model.entity(named: "Person"))
        let preserved = model.allAttributes(of: person).filter(\.preservesValueInHistoryOnDeletion).map(\.name)
        #expect(preserved.sorted() == ["cloudDeleteState", "personUUID"])
        #expect(model.entity(named: "Album")?.superentity == "GenericAlbum")
        #expect(model.entity(named: "Album")?.relationship(named: "assets")?.isOrdered == true)
    }

    @Test func entityNumbersFollowTheDocumentedRule() throws {
        for store in [Fixtures.sampleModelV1, Fixtures.sampleModel2V1, Fixtures.moody] {
            let model = try cachedModel(store)
            let rows = try RawSQLite.rows(store, "SELECT Z_NAME, Z_ENT FROM Z_PRIMARYKEY WHERE Z_ENT < 16000")
            let stored = Dictionary(
                uniqueKeysWithValues: rows.map { ($0[0].textValue ?? "", Int($0[1].integerValue ?? 0)) }
            )
            #expect(model.defaultEntityNumbers() == stored, "\(store)")
        }
    }

    @Test func corruptCacheIsRejected() {
        #expect(throws: ModelError.self) { try ModelCacheDecoder(source: "x").decode(compressed: [1, 2, 3, 4]) }
        #expect(throws: ModelError.self) { try ModelCacheDecoder(source: "x").decode(archive: Array("bplist00".utf8)) }
    }
}
