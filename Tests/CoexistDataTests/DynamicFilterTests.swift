import CoexistStore
import Foundation
import TestSupport
import Testing

@testable import CoexistData

/// The guide's FilteredTasksView, every combination of its filters built at run time, checked against plain
/// Swift filtering of all tasks.
@Suite struct DynamicFilterTests {
    let directory: TemporaryDirectory
    let context: ModelContext
    let categories: [CategoryRecord]
    let tasks: [TaskRecord]

    init() throws {
        directory = try TemporaryDirectory()
        context = try ModelContext(try SharedStore.create(in: directory).new, author: "filters")
        categories = [CategoryRecord(name: "Work"), CategoryRecord(name: "Home")]
        let titles = [
            "Pay rent", "Call Zoë", "pay taxes", "Café visit", "Write report", "Cafe\u{301} notes", "Plan trip",
        ]
        var tasks: [TaskRecord] = []
        for (index, title) in titles.enumerated() {
            let category = index % 3 == 2 ? nil : categories[index % 2]
            tasks.append(
                TaskRecord(
                    title: title,
                    isCompleted: index % 2 == 0,
                    createdAt: Date(timeIntervalSinceReferenceDate: 800_000_000 + Double(index * 60)),
                    category: category
                )
            )
        }
        self.tasks = tasks
        categories.forEach { context.insert($0) }
        tasks.forEach { context.insert($0) }
        try context.save()
    }

    static func filter(showCompleted: Bool, categoryID: UUID?, search: String) -> Filter<TaskRecord> {
        var filters: [Filter<TaskRecord>] = []
        if !showCompleted { filters.append(.where(#Predicate { !$0.isCompleted })) }
        if let categoryID { filters.append(.where(#Predicate { $0.category?.id == categoryID })) }
        if !search.isEmpty { filters.append(.where(#Predicate { $0.title.contains(search) })) }
        return .all(filters)
    }

    @Test func everyCombination() throws {
        let categoryChoices: [UUID?] = [nil, categories[0].id, categories[1].id, UUID()]
        let searches = ["", "Pay", "pay", "Café", "Zoë", "e", "nothing"]
        var combinations = 0
        for showCompleted in [true, false] {
            for categoryID in categoryChoices {
                for search in searches {
                    let descriptor = FetchDescriptor<TaskRecord>(
                        filter: Self.filter(showCompleted: showCompleted, categoryID: categoryID, search: search),
                        sortBy: [SortDescriptor(\.createdAt, order: .reverse)]
                    )
                    let fetched = try context.fetch(descriptor).map(\.title)
                    let expected = tasks.filter { task in
                        (showCompleted || !task.isCompleted) && (categoryID == nil || task.category?.id == categoryID)
                            && (search.isEmpty || task.title.contains(search))
                    }
                    .sorted { $0.createdAt > $1.createdAt }.map(\.title)
                    #expect(
                        fetched == expected,
                        "showCompleted \(showCompleted), category \(String(describing: categoryID)), search \(search)"
                    )
                    #expect(try context.fetchCount(descriptor) == expected.count)
                    #expect(try context.plan(descriptor).exact, "the whole filter runs in SQL")
                    combinations += 1
                }
            }
        }
        #expect(combinations == 56)
    }

    @Test func anyAndNotCompose() throws {
        let home = categories[1].id
        let filter = Filter<TaskRecord>.any([
            .where(#Predicate { $0.title.starts(with: "Pay") }),
            .not(.where(#Predicate { $0.category?.id == home })),
        ])
        let fetched = Set(try context.fetch(FetchDescriptor(filter: filter)).map(\.title))
        let expected = Set(tasks.filter { $0.title.starts(with: "Pay") || $0.category?.id != home }.map(\.title))
        #expect(fetched == expected)
    }

    /// Canonically equivalent strings match as they do in Swift: "Café" with a precomposed é and with e + ◌́.
    @Test func stringSemanticsAreSwifts() throws {
        let precomposed = "Caf\u{E9}"
        let fetched = try context.fetch(
            FetchDescriptor<TaskRecord>(predicate: #Predicate { $0.title.contains(precomposed) })
        )
        #expect(Set(fetched.map(\.title)) == Set(tasks.filter { $0.title.contains(precomposed) }.map(\.title)))
        #expect(fetched.count == 2)
        let equal = try context.fetch(
            FetchDescriptor<TaskRecord>(predicate: #Predicate { $0.title == "Cafe\u{301} notes" })
        )
        #expect(equal.count == 1)
    }

    /// What SQL cannot express is evaluated in memory, and the result is still right.
    @Test func untranslatablePartsRunInMemory() throws {
        let descriptor = FetchDescriptor<TaskRecord>(
            predicate: #Predicate { $0.title.localizedLowercase.contains("pay") && !$0.isCompleted }
        )
        #expect(try !context.plan(descriptor).exact)
        let fetched = try context.fetch(descriptor).map(\.title)
        #expect(fetched == tasks.filter { $0.title.lowercased().contains("pay") && !$0.isCompleted }.map(\.title))
    }

    @Test func comparisonsAndNilChecks() throws {
        let cutoff = Date(timeIntervalSinceReferenceDate: 800_000_000 + 120)
        let recent = FetchDescriptor<TaskRecord>(predicate: #Predicate { $0.createdAt >= cutoff && $0.category == nil })
        #expect(try context.plan(recent).exact)
        let expected = tasks.filter { $0.createdAt >= cutoff && $0.category == nil }.map(\.title)
        #expect(try context.fetch(recent).map(\.title) == expected)
        let named = FetchDescriptor<TaskRecord>(predicate: #Predicate { $0.category?.name == "Home" })
        #expect(try context.fetch(named).count == tasks.filter { $0.category?.name == "Home" }.count)
    }
}
