public import CoexistLegacyStore
import CoexistModel

/// A small model exercising what the demo model lacks: an ordered one-to-many with a Deny rule, an
/// ordered many-to-many, a one-to-one with Cascade, a uniqueness constraint, and inheritance.
public enum LibraryModel {
    public static let xml = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" userDefinedModelVersionIdentifier="library-1">
            <entity name="Book" representedClassName="Book" syncable="YES">
                <attribute name="title" attributeType="String"/>
                <attribute name="isbn" optional="YES" attributeType="String" preserveAfterDeletion="YES"/>
                <relationship name="cover" optional="YES" maxCount="1" deletionRule="Cascade" destinationEntity="Cover" inverseName="book" inverseEntity="Cover"/>
                <relationship name="shelf" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Shelf" inverseName="books" inverseEntity="Shelf"/>
                <relationship name="tags" optional="YES" toMany="YES" ordered="YES" deletionRule="Nullify" destinationEntity="Tag" inverseName="books" inverseEntity="Tag"/>
            </entity>
            <entity name="Comic" representedClassName="Comic" parentEntity="Book" syncable="YES">
                <attribute name="artist" optional="YES" attributeType="String" preserveAfterDeletion="YES"/>
            </entity>
            <entity name="Cover" representedClassName="Cover" syncable="YES">
                <attribute name="color" optional="YES" attributeType="String"/>
                <relationship name="book" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Book" inverseName="cover" inverseEntity="Book"/>
            </entity>
            <entity name="Shelf" representedClassName="Shelf" syncable="YES">
                <attribute name="label" attributeType="String"/>
                <relationship name="books" optional="YES" toMany="YES" ordered="YES" deletionRule="Deny" destinationEntity="Book" inverseName="shelf" inverseEntity="Book"/>
            </entity>
            <entity name="Tag" representedClassName="Tag" syncable="YES">
                <attribute name="name" attributeType="String"/>
                <relationship name="books" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Book" inverseName="tags" inverseEntity="Book"/>
                <uniquenessConstraints>
                    <uniquenessConstraint>
                        <constraint value="name"/>
                    </uniquenessConstraint>
                </uniquenessConstraints>
            </entity>
        </model>
        """

    /// A new store of the library model in `directory`, open read-write.
    public static func createStore(in directory: TemporaryDirectory) throws -> LegacyStore {
        let file = try directory.write("Library.contents", Array(xml.utf8))
        let model = try XCDataModelReader.read(path: file)
        return try StoreCreator.create(path: directory.file("Library.sqlite"), model: model)
    }
}
