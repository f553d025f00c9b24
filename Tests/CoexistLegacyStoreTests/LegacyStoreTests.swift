import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistSQLite
import TestSupport
import Testing

@Suite struct LegacyStoreTests {
    /// Every fixture opens with its own model, and every stored property of every entity is located.
    @Test(arguments: Fixtures.allStores) func everyPropertyResolves(store: String) throws {
        let opened = try LegacyStore(path: store)
        #expect(opened.modelSource == .modelCache)
        let schema = try #require(opened.schema)
        var unresolved: [String] = []
        for mapping in schema.entities.values {
            for (name, storage) in mapping.properties {
                if case .unresolved(let reason) = storage { unresolved.append("\(mapping.name).\(name): \(reason)") }
            }
        }
        #expect(unresolved == [])
    }

    @Test func columnCollisionSuffixesAndPolymorphicColumns() throws {
        let store = try LegacyStore(path: Fixtures.sampleModel2V1)
        let page = try #require(store.schema?.entities["Page"])
        #expect(page.properties["book"] == .toOne(column: "ZBOOK", entityColumn: "Z1_BOOK", orderColumn: nil))
        let photos = try LegacyStore(path: Fixtures.photos)
        let album = try #require(photos.schema?.entities["Album"])
        #expect(
            album.properties["assets"]
                == .joinTable(
                    table: "Z_33ASSETS",
                    sourceColumn: "Z_33ALBUMS",
                    destinationColumn: "Z_3ASSETS",
                    orderColumn: "Z_FOK_3ASSETS"
                )
        )
        let asset = try #require(photos.schema?.entities["Asset"])
        #expect(
            asset.properties["libraryScopeAssetContributors"]
                == .hiddenForeignKey(table: "ZASSETCONTRIBUTOR", column: "Z3LIBRARYSCOPEASSETCONTRIBUTORS")
        )
        let person = try #require(photos.schema?.entities["Person"])
        if case .joinTable(_, _, let destination, _) = person.properties["mergeCandidates"] {
            #expect(destination == "REFLEXIVE")
        } else {
            Issue.record("Person.mergeCandidates is not a join table")
        }
    }

    /// SampleModel_V2 was migrated with ExpensiveSportCar renamed to LuxuryCar (renaming identifier): the
    /// store keeps the old name in Z_PRIMARYKEY, the model cache has the new one.
    @Test func renamedEntitiesResolveThroughTheirRenamingIdentifier() throws {
        let store = try LegacyStore(path: Fixtures.sampleModelV2)
        let luxury = try #require(store.schema?.entities["LuxuryCar"])
        #expect(luxury.number == 3)
        #expect(luxury.table == "ZCAR")
        #expect(luxury.properties["isLimitedEdition"] == .attribute(column: "ZISLIMITEDEDITION"))
    }

    @Test func metadataIsRead() throws {
        let store = try LegacyStore(path: Fixtures.photos)
        #expect(store.metadata.storeUUID == "FE941CCE-3AF4-4243-907C-C2233C09008D")
        #expect(store.metadata.storeType == "SQLite")
        #expect(store.metadata.frameworkVersion == 1522)
        #expect(store.hasHistory)
    }

    @Test func aModelThatDoesNotMatchIsRefusedNamingTheEntity() throws {
        let model = try XCDataModelReader.read(path: Fixtures.demoModel)
        let error = #expect(throws: LegacyStoreError.self) {
            try LegacyStore(path: Fixtures.sampleModelV1, model: model)
        }
        #expect(error?.description.contains("entity Category has no Z_PRIMARYKEY row") == true)
    }

    @Test func foreignAndDamagedFilesAreNamed() throws {
        let directory = try TemporaryDirectory()
        let plain = directory.file("plain.sqlite")
        try Connection(path: plain, options: OpenOptions(access: .readWriteCreate)).execute("CREATE TABLE t (a)")
        let notCoreData = #expect(throws: LegacyStoreError.self) { try LegacyStore(path: plain) }
        #expect(notCoreData?.description == "\(plain): not a Core Data store (no Z_METADATA table)")
        let text = try directory.write("text.sqlite", Array("not a database".utf8))
        let foreign = #expect(throws: LegacyStoreError.self) { try LegacyStore(path: text) }
        #expect(foreign?.description.contains("not an SQLite database") == true)
    }
}

extension LegacyStoreTests {
    /// Photos 26.1's persistent triggers keep five attributes: two the model calls derived (Core Data's
    /// `Z_DA_*`), three its own `ZT_*` triggers maintain (a face count, a visibility flag).
    @Test func photosTriggerMaintainedAttributes() throws {
        let maintained = try LegacyStore(path: Fixtures.photos).triggerMaintainedAttributes()
        #expect(maintained["Person"] == ["faceCount"])
        #expect(maintained["Asset"] == ["derivedCameraCaptureDevice"])
        #expect(maintained["GraphNode"] == ["primaryLabelCode"])
        #expect(maintained.keys.contains { $0.hasSuffix("Face") || $0 == "DetectedFace" })
        let books = try LegacyStore(path: Fixtures.sampleModel2V1).triggerMaintainedAttributes()
        #expect(books["Book"] == ["pagesCount"] && Set(books.values.flatMap { $0 }) == ["pagesCount"], "\(books)")
    }
}
