import CoexistModel
import Testing

@testable import CoexistSaving

/// Setting a to-one keeps its inverse, the same for both formats.
@Suite struct ToOneUpkeepTests {
    /// To-ones by object and name, and the changes recorded, in order.
    final class Graph {
        var links: [String: [String: String]] = [:]
        var touched: [String] = []

        func set(_ id: String, _ name: String, to target: String?, inverse: Relationship?) throws {
            try ToOneUpkeep.set(
                id,
                name,
                from: links[id]?[name],
                to: target,
                inverse: inverse,
                partner: { target in inverse.flatMap { self.links[target]?[$0.name] } },
                write: { object, property, value in self.links[object, default: [:]][property] = value },
                touch: { object, property in self.touched.append("\(object).\(property)") }
            )
        }
    }

    @Test func aOneToOneTakesTheTargetFromItsPartnerAndReleasesTheOldTarget() throws {
        let spouse = Relationship(name: "spouse", destination: "Person", inverse: "spouse")
        let graph = Graph()
        try graph.set("ann", "spouse", to: "bob", inverse: spouse)
        try graph.set("cid", "spouse", to: "dee", inverse: spouse)
        graph.touched = []
        // Ann marries Dee: Bob loses Ann, Cid loses Dee.
        try graph.set("ann", "spouse", to: "dee", inverse: spouse)
        #expect(graph.links["ann"]?["spouse"] == "dee")
        #expect(graph.links["dee"]?["spouse"] == "ann")
        #expect(graph.links["bob"]?["spouse"] == .some(nil))
        #expect(graph.links["cid"]?["spouse"] == .some(nil))
        #expect(graph.touched == ["cid.spouse", "bob.spouse", "dee.spouse", "ann.spouse"])
    }

    @Test func aToManyInverseRecordsBothOwnersAndSettingTheSameTargetDoesNothing() throws {
        let tasks = Relationship(name: "tasks", destination: "Task", inverse: "category", isToMany: true)
        let graph = Graph()
        try graph.set("t1", "category", to: "home", inverse: tasks)
        try graph.set("t1", "category", to: "work", inverse: tasks)
        #expect(graph.touched == ["home.tasks", "t1.category", "home.tasks", "work.tasks", "t1.category"])
        graph.touched = []
        try graph.set("t1", "category", to: "work", inverse: tasks)
        #expect(graph.touched.isEmpty)
        try graph.set("t1", "category", to: nil, inverse: nil)
        #expect(graph.links["t1"]?["category"] == .some(nil))
        #expect(graph.touched == ["t1.category"])
    }
}
