import FoundationEssentials

/// The demo model, `config/TaskModel.xcdatamodeld` (versions 1.0.0 and 2.0.0), carried in the binary so
/// that `coexistctl demo` runs from anywhere. A test holds it to the folder's files.
public enum DemoModel {
    /// Each file of the `.xcdatamodeld` folder: its path inside the folder and its text (without the last
    /// newline).
    public static let files: [(path: String, text: String)] = [
        (
            ".xccurrentversion",
            #"""
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
            	<key>_XCCurrentVersionName</key>
            	<string>TaskModel 2.xcdatamodel</string>
            </dict>
            </plist>
            """#
        ),
        (
            "TaskModel.xcdatamodel/contents",
            #"""
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="23605" systemVersion="24A335" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="1.0.0">
                <entity name="Category" representedClassName="CDCategory" syncable="YES">
                    <attribute name="id" attributeType="UUID" usesScalarValueType="NO" preserveAfterDeletion="YES"/>
                    <attribute name="name" attributeType="String" defaultValueString=""/>
                    <relationship name="tasks" optional="YES" toMany="YES" deletionRule="Cascade" destinationEntity="Task" inverseName="category" inverseEntity="Task"/>
                </entity>
                <entity name="Task" representedClassName="CDTask" syncable="YES">
                    <attribute name="createdAt" attributeType="Date" usesScalarValueType="NO"/>
                    <attribute name="id" attributeType="UUID" usesScalarValueType="NO" preserveAfterDeletion="YES"/>
                    <attribute name="isCompleted" attributeType="Boolean" defaultValueString="NO" usesScalarValueType="YES"/>
                    <attribute name="title" attributeType="String" defaultValueString=""/>
                    <relationship name="category" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Category" inverseName="tasks" inverseEntity="Category"/>
                </entity>
            </model>
            """#
        ),
        (
            "TaskModel 2.xcdatamodel/contents",
            #"""
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="23605" systemVersion="24A335" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="2.0.0">
                <entity name="Category" representedClassName="CDCategory" syncable="YES">
                    <attribute name="color" attributeType="String" defaultValueString="blue"/>
                    <attribute name="id" attributeType="UUID" usesScalarValueType="NO" preserveAfterDeletion="YES"/>
                    <attribute name="name" attributeType="String" defaultValueString=""/>
                    <relationship name="tasks" optional="YES" toMany="YES" deletionRule="Cascade" destinationEntity="Task" inverseName="category" inverseEntity="Task"/>
                </entity>
                <entity name="Task" representedClassName="CDTask" syncable="YES">
                    <attribute name="createdAt" attributeType="Date" usesScalarValueType="NO"/>
                    <attribute name="id" attributeType="UUID" usesScalarValueType="NO" preserveAfterDeletion="YES"/>
                    <attribute name="isCompleted" attributeType="Boolean" defaultValueString="NO" usesScalarValueType="YES"/>
                    <attribute name="notes" attributeType="String" defaultValueString=""/>
                    <attribute name="priority" attributeType="Integer 16" defaultValueString="0" usesScalarValueType="YES"/>
                    <attribute name="title" attributeType="String" defaultValueString=""/>
                    <relationship name="category" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Category" inverseName="tasks" inverseEntity="Category"/>
                </entity>
            </model>
            """#
        ),
    ]

    /// Writes the model into `directory` as `TaskModel.xcdatamodeld`; returns its path.
    public static func write(into directory: String) throws -> String {
        let root = directory + "/TaskModel.xcdatamodeld"
        for file in files {
            let path = root + "/" + file.path
            let folder = String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            guard FileManager.default.createFile(atPath: path, contents: Data((file.text + "\n").utf8)) else {
                throw CocoaError(.fileWriteUnknown)
            }
        }
        return root
    }
}
