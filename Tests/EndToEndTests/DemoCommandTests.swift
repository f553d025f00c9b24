import Foundation
import TestSupport
import Testing

/// The README's first command: the demo job on the embedded default model.
@Suite struct DemoCommandTests {
    @Test func demoCreatesAndInspectsAStore() throws {
        let directory = try TemporaryDirectory()
        let store = directory.file("demo.sqlite")
        let result = try ProductProcess.run("coexistctl", ["demo", "--store", store], directory: Fixtures.repository)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("created \(store)"))
        #expect(result.stdout.contains("Task.category -> Category"))
        #expect(result.stdout.contains("\"2.0.0\""))
        #expect(FileManager.default.fileExists(atPath: store))
    }
}
