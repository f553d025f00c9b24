import CoexistBridge
import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistSQLite
import CoexistStore
import TestSupport
import Testing

/// A delete that cascades records, for every object it deletes, the tombstone and the partners' updates a
/// direct delete records: the objects are deleted children first, so that none is gone (by the schema's
/// ON DELETE CASCADE) before its own delete reads it.
@Suite struct CascadeTombstoneTests {
    @Test func cascadedDeletesKeepTheirTombstones() throws {
        let directory = try TemporaryDirectory()
        let shared = try SharedStore.create(in: directory)
        var category = ObjectRef(entity: "Category", id: "")
        var tasks: [ObjectRef] = []
        _ = try shared.new.save(SaveMetadata(author: "new-app")) { save in
            category = try save.insert("Category", id: nil, ["name": .string("Home"), "color": .string("blue")])
            for index in 0..<3 {
                let task = try save.insert("Task", id: nil, ["title": .string("t\(index)"), "createdAt": .date(0)])
                try save.setToOne(task, "category", category)
                tasks.append(task)
            }
        }
        let deleted = try shared.new.save(SaveMetadata(author: "new-app")) { save in try save.delete(category) }
        let changes = deleted.changes
        #expect(changes.count == 4)
        for task in tasks {
            let change = try #require(changes.first { $0.objectID == task.id })
            #expect(change.type == .delete)
            #expect(change.tombstone["id"] == .uuid(UUIDText.bytes(task.id) ?? []), "\(change.tombstone)")
        }
    }

    /// A category with tasks deleted on either side is mirrored whole: the other side holds neither, and the
    /// two schemas agree.
    @Test func cascadedDeletesMirrorBothWays() throws {
        let directory = try TemporaryDirectory()
        let shared = try SharedStore.create(in: directory)
        let bridge = try SyncEngine(connection: try Connection(path: shared.legacy.path), model: nil)
        try bridge.initialSyncIfNeeded()
        // New side: a category and its tasks, mirrored, then deleted there.
        var category = ObjectRef(entity: "Category", id: "")
        _ = try shared.new.save(SaveMetadata(author: "new-app")) { save in
            category = try save.insert("Category", id: nil, ["name": .string("Home"), "color": .string("blue")])
            for index in 0..<3 {
                let task = try save.insert("Task", id: nil, ["title": .string("t\(index)"), "createdAt": .date(0)])
                try save.setToOne(task, "category", category)
            }
        }
        _ = try bridge.catchUp()
        #expect(try shared.legacy.objects(of: "Task").count == 3)
        _ = try shared.new.save(SaveMetadata(author: "new-app")) { save in try save.delete(category) }
        let mirrored = try bridge.catchUp()
        #expect(mirrored.parked == 0)
        #expect(try shared.legacy.objects(of: "Task").isEmpty && shared.legacy.objects(of: "Category").isEmpty)

        // Legacy side: the same, deleted there.
        let made = try shared.legacy.save(SaveMetadata(author: "old-app")) { save in
            let home = try save.insert(
                "Category",
                ["id": .uuid(UUIDText.randomBytes()), "name": .string("Work"), "color": .string("red")]
            )
            for index in 0..<3 {
                let task = try save.insert(
                    "Task",
                    ["id": .uuid(UUIDText.randomBytes()), "title": .string("l\(index)"), "createdAt": .date(0)]
                )
                try save.setToOne(task, "category", home)
            }
        }
        _ = try bridge.catchUp()
        let home = try #require(made.changes.first { $0.entity == "Category" }?.objectPK)
        _ = try shared.legacy.save(SaveMetadata(author: "old-app")) { save in
            try save.delete(ObjectID(entity: "Category", pk: home))
        }
        #expect(try bridge.catchUp().parked == 0)
        #expect(try shared.new.refs(of: "Task").isEmpty && shared.new.refs(of: "Category").isEmpty)
        #expect(try Verifier(engine: bridge).run().equal)
    }

    /// A project whose tasks are reached both from it and from its milestones, which `rule` says what
    /// deleting does to their tasks: its store, and the model.
    private func projects(milestoneTasks rule: String) throws -> (TemporaryDirectory, NewStore) {
        let xml = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" sourceLanguage="Swift">
                <entity name="Project" representedClassName="Project" syncable="YES">
                    <attribute name="id" attributeType="UUID" usesScalarValueType="NO" preserveAfterDeletion="YES"/>
                    <relationship name="milestones" optional="YES" toMany="YES" deletionRule="Cascade" \
            destinationEntity="Milestone" inverseName="project" inverseEntity="Milestone"/>
                    <relationship name="tasks" optional="YES" toMany="YES" deletionRule="Cascade" \
            destinationEntity="Task" inverseName="project" inverseEntity="Task"/>
                </entity>
                <entity name="Milestone" representedClassName="Milestone" syncable="YES">
                    <attribute name="id" attributeType="UUID" usesScalarValueType="NO" preserveAfterDeletion="YES"/>
                    <relationship name="project" optional="YES" maxCount="1" deletionRule="Nullify" \
            destinationEntity="Project" inverseName="milestones" inverseEntity="Project"/>
                    <relationship name="tasks" optional="YES" toMany="YES" deletionRule="\(rule)" \
            destinationEntity="Task" inverseName="milestone" inverseEntity="Task"/>
                </entity>
                <entity name="Task" representedClassName="Task" syncable="YES">
                    <attribute name="id" attributeType="UUID" usesScalarValueType="NO" preserveAfterDeletion="YES"/>
                    <relationship name="milestone" optional="YES" maxCount="1" deletionRule="Nullify" \
            destinationEntity="Milestone" inverseName="tasks" inverseEntity="Milestone"/>
                    <relationship name="project" optional="YES" maxCount="1" deletionRule="Nullify" \
            destinationEntity="Project" inverseName="tasks" inverseEntity="Project"/>
                </entity>
            </model>
            """
        let directory = try TemporaryDirectory()
        let model = try XCDataModelReader.read(path: try directory.write("Projects.contents", Array(xml.utf8)))
        let path = directory.file("Projects.sqlite")
        _ = try StoreCreator.create(path: path, model: model)
        let store = try NewStore(path: path, model: model)
        try store.createSchema()
        return (directory, store)
    }

    /// Whatever the order the rules reach the objects in, and whatever the schema's `ON DELETE` actions
    /// (CASCADE for Cascade, RESTRICT for Deny), a project deleted with its milestones and tasks records every
    /// object's tombstone and leaves no row.
    @Test(arguments: ["Cascade", "Deny", "Nullify"])
    func everyObjectOfACascadeKeepsItsTombstone(milestoneTasks rule: String) throws {
        let (directory, store) = try projects(milestoneTasks: rule)
        _ = directory
        var project = ObjectRef(entity: "Project", id: "")
        var members: [ObjectRef] = []
        _ = try store.save(SaveMetadata(author: "app")) { save in
            project = try save.insert("Project", id: nil, [:])
            for _ in 0..<2 {
                let milestone = try save.insert("Milestone", id: nil, [:])
                try save.setToOne(milestone, "project", project)
                members.append(milestone)
                for _ in 0..<2 {
                    let task = try save.insert("Task", id: nil, [:])
                    try save.setToOne(task, "project", project)
                    try save.setToOne(task, "milestone", milestone)
                    members.append(task)
                }
            }
        }
        let deleted = try store.save(SaveMetadata(author: "app")) { save in try save.delete(project) }
        #expect(deleted.changes.count == members.count + 1)
        for member in members + [project] {
            let change = try #require(deleted.changes.first { $0.objectID == member.id }, "\(member)")
            #expect(change.type == .delete)
            #expect(change.tombstone["id"] == .uuid(UUIDText.bytes(member.id) ?? []), "\(member): \(change.tombstone)")
        }
        for entity in ["Project", "Milestone", "Task"] { #expect(try store.refs(of: entity).isEmpty) }
    }
}
