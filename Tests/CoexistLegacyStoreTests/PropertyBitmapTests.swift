import CoexistLegacyStore
import CoexistModel
import TestSupport
import Testing

/// The `ZCOLUMNS` slots of each kind of property, in the six groups of coredata-sqlite-format.md §4.3:
/// to-ones, polymorphic to-ones, to-ones with an ordered inverse, attributes — each by name — then
/// one-to-many, then many-to-many and to-manys without an inverse; over the inherited and own properties as
/// one set.
@Suite struct PropertyBitmapTests {
    static func slots(_ model: Model, _ entity: String) throws -> [String] {
        PropertyBitmap(entity: try #require(model.entity(named: entity)), model: model).slots
    }

    static let links = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
            <entity name="Node" representedClassName="Node" syncable="YES">
                <attribute name="name" optional="YES" attributeType="String"/>
                <attribute name="scratch" optional="YES" transient="YES" attributeType="String"/>
                <relationship name="outgoing" optional="YES" toMany="YES" ordered="YES" deletionRule="Nullify" destinationEntity="Link" inverseName="source" inverseEntity="Link"/>
                <relationship name="incoming" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Link" inverseName="target" inverseEntity="Link"/>
                <relationship name="notes" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Note"/>
                <relationship name="peers" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Node" inverseName="peers" inverseEntity="Node"/>
            </entity>
            <entity name="Page" representedClassName="Page" parentEntity="Node" syncable="YES">
                <attribute name="body" optional="YES" attributeType="String"/>
            </entity>
            <entity name="Link" representedClassName="Link" syncable="YES">
                <attribute name="weight" optional="YES" attributeType="Double" usesScalarValueType="YES"/>
                <relationship name="target" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Node" inverseName="incoming" inverseEntity="Node"/>
                <relationship name="source" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Node" inverseName="outgoing" inverseEntity="Node"/>
                <relationship name="anchor" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Note"/>
            </entity>
            <entity name="Note" representedClassName="Note" syncable="YES">
                <attribute name="text" optional="YES" attributeType="String"/>
            </entity>
        </model>
        """

    static func linksModel() throws -> Model {
        let directory = try TemporaryDirectory()
        return try XCDataModelReader.read(path: try directory.write("links.contents", Array(links.utf8)))
    }

    /// Two polymorphic to-ones (their destination has a sub-entity) take their group-2 slots after every
    /// group-1 slot, not beside their foreign key; one of them also has an ordered inverse (group 3).
    @Test func polymorphicToOnesAndOrderedInverses() throws {
        #expect(
            try Self.slots(Self.linksModel(), "Link") == [
                "anchor", "source", "target",  // group 1, by name
                "source", "target",  // group 2: Node has the sub-entity Page
                "source",  // group 3: Node.outgoing is ordered
                "weight",
            ]
        )
    }

    /// One-to-many (inverse a to-one) before many-to-many and to-manys without an inverse; transients left out.
    @Test func oneToManyThenManyToManyAndNoInverse() throws {
        let model = try Self.linksModel()
        let node = try #require(model.entity(named: "Node"))
        let bitmap = PropertyBitmap(entity: node, model: model)
        #expect(bitmap.slots == ["name", "outgoing", "incoming", "notes", "peers"])
        #expect(Array(bitmap.slots[bitmap.oneToMany]) == ["outgoing", "incoming"])
        #expect(Array(bitmap.slots[bitmap.manyToMany]) == ["notes", "peers"])
        // A sub-entity's inherited and own properties are one set: its own attribute sorts among the others.
        #expect(try Self.slots(model, "Page") == ["body", "name", "outgoing", "incoming", "notes", "peers"])
        // A calibrated order moves the group's names, and only them.
        let calibrated = PropertyBitmap(entity: node, model: model, oneToManyOrder: ["incoming"])
        #expect(calibrated.slots == ["name", "incoming", "outgoing", "notes", "peers"])
    }

    /// CoreDataPlus SampleModel: Car, SportCar, ExpensiveSportCar (three levels) and Person.cars.
    @Test func threeLevelsOfInheritance() throws {
        let model = try XCDataModelReader.read(path: Fixtures.sampleModelXcdatamodeld)
        let car = ["owner", "color", "maker", "markedForDeletionAsOf", "model", "numberPlate"]
        #expect(try Self.slots(model, "Car") == car)
        #expect(try Self.slots(model, "SportCar") == car)
        #expect(
            try Self.slots(model, "ExpensiveSportCar") == [
                "owner", "color", "isLimitedEdition", "maker", "markedForDeletionAsOf", "model", "numberPlate",
            ]
        )
        #expect(try Self.slots(model, "Person") == ["firstName", "id", "lastName", "updatedAt", "cars"])
    }

    /// Every update of every fixture store with history has the length of its entity's layout, and sets no
    /// slot past its last one.
    @Test(arguments: Fixtures.allStores) func everyFixtureUpdateFitsTheLayout(_ path: String) throws {
        let store = try LegacyStore(path: path)
        guard store.hasHistory, let model = store.model, let schema = store.schema else { return }
        var layouts: [Int: PropertyBitmap] = [:]
        for entity in model.entities {
            if let number = schema.entities[entity.name]?.number { layouts[number] = store.bitmap(of: entity) }
        }
        var checked = 0
        try store.connection.forEachRow("SELECT ZENTITY, ZCOLUMNS FROM ACHANGE WHERE ZCHANGETYPE = 1") { row in
            let number = Int(row[0].integerValue ?? -1)
            let layout = try #require(layouts[number], "entity \(number)")
            let bytes = row[1].blobValue ?? []
            #expect(layout.decode(bytes) != nil, "entity \(number): \(bytes.count) bytes, layout \(layout.byteCount)")
            checked += 1
        }
        #expect(path != Fixtures.photos || checked == 1_731)
    }
}
