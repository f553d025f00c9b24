import Foundation
import TestSupport
import Testing

/// An executable package outside coexist (`Tests/Packages/AdapterClient`) depends on both adapters by
/// their product names, builds, and writes through each; coexistd then mirrors both writes.
@Suite struct AdapterProductsTests {
    static let client = Fixtures.repository + "/Tests/Packages/AdapterClient"

    @Test func anOutsidePackageLinksBothProductsAndUsesNothingInternal() throws {
        let source = try String(contentsOfFile: Self.client + "/Sources/adapter-client/main.swift", encoding: .utf8)
        let imports = source.split(separator: "\n").filter { $0.hasPrefix("import ") }.map { $0.dropFirst(7) }
        #expect(Set(imports) == ["CoexistCoreData", "CoexistData", "Foundation"])
        let manifest = try String(contentsOfFile: Self.client + "/Package.swift", encoding: .utf8)
        #expect(manifest.contains(#".product(name: "CoexistCoreData", package: "coexist")"#))
        #expect(manifest.contains(#".product(name: "CoexistData", package: "coexist")"#))

        // Each adapter's documentation article prints a complete program: the one this package compiles.
        for (article, program) in [
            (
                "Sources/CoexistCoreData/CoexistCoreData.docc/CoexistCoreData.md",
                "coredata-example/CoreDataExample.swift"
            ),
            ("Sources/CoexistData/CoexistData.docc/CoexistData.md", "data-example/DataExample.swift"),
        ] {
            let text = try String(contentsOfFile: Fixtures.repository + "/" + article, encoding: .utf8)
            let printed = text.components(separatedBy: "```swift\n").dropFirst().first?.components(separatedBy: "```")
                .first
            let compiled = try String(contentsOfFile: Self.client + "/Sources/" + program, encoding: .utf8)
            #expect(printed == compiled, "\(article) and \(program) differ")
        }

        let scratch = Fixtures.repository + "/.build/adapter-client"
        // SwiftPM keeps its build plan of a path dependency across runs and misses source files added to
        // coexist since: without the plan it makes a new one (objects already built are kept).
        try? FileManager.default.removeItem(atPath: scratch + "/debug.yaml")
        let build = try ProductProcess.run(
            path: "swift",
            ["build", "--package-path", Self.client, "--scratch-path", scratch, "-j", "2"]
        )
        try #require(build.status == 0, "\(build.stdout)\(build.stderr)")

        let directory = try TemporaryDirectory()
        let store = directory.file("App.sqlite")
        let model = Fixtures.demoModel
        #expect(try ProductProcess.run("coexistctl", ["create", store, "--model", model]).status == 0)
        let daemon = ["--database", store, "--model", model, "--socket", directory.file("s.sock"), "--once"]
        #expect(try ProductProcess.run("coexistd", daemon).status == 0)
        let run = try ProductProcess.run(path: scratch + "/debug/adapter-client", [store, model])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "legacy tasks: 1\nnew tasks: 1\n")
        #expect(try ProductProcess.run("coexistd", daemon).status == 0)
        let verify = try ProductProcess.run("coexistctl", ["verify", store, "--model", model])
        #expect(verify.stdout.contains("equal: 2 objects on each side"), "\(verify.stdout)\(verify.stderr)")
    }
}
