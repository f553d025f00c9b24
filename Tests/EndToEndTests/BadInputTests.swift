import Foundation
import TestSupport
import Testing

/// Bad input: one clear line on stderr naming the file and the problem, and a sysexits code.
@Suite struct BadInputTests {
    func expectFailure(_ arguments: [String], status: Int32, mentions: [String]) throws {
        let result = try ProductProcess.run("coexistctl", arguments)
        #expect(result.status == status, "\(result.stderr)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(result.stderr)")
        for text in mentions { #expect(result.stderr.contains(text), "\(result.stderr) lacks \(text)") }
        #expect(result.stdout.isEmpty)
    }

    @Test func fileThatIsNotSQLite() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("notes.sqlite", Array(String(repeating: "plain text\n", count: 50).utf8))
        try expectFailure(["inspect", path], status: 65, mentions: [path, "not an SQLite database"])
    }

    @Test func truncatedStore() throws {
        let directory = try TemporaryDirectory()
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Fixtures.sampleModel2V1)))
        let path = try directory.write("cut.sqlite", Array(bytes.prefix(bytes.count / 3)))
        try expectFailure(["inspect", path], status: 65, mentions: [path, "truncated"])
    }

    @Test func sqliteFileThatIsNotACoreDataStore() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("plain.sqlite")
        let created = try ProductProcess.run("coexistctl", ["create", path, "--model", Fixtures.demoModel])
        #expect(created.status == 0)
        _ = try RawSQLite.rows(path, "SELECT 1")
        let plain = directory.file("other.sqlite")
        try CoexistSQLiteHelper.createPlainDatabase(plain)
        try expectFailure(["inspect", plain], status: 65, mentions: [plain, "not a Core Data store", "Z_METADATA"])
    }

    @Test func modelWithUnknownAttributeType() throws {
        let directory = try TemporaryDirectory()
        let source = try String(
            contentsOfFile: Fixtures.demoModel + "/TaskModel 2.xcdatamodel/contents",
            encoding: .utf8
        )
        let file = try directory.write(
            "contents",
            Array(source.replacingOccurrences(of: "\"Date\"", with: "\"Timestamp\"").utf8)
        )
        try expectFailure(
            ["inspect", Fixtures.sampleModelV1, "--model", file],
            status: 65,
            mentions: [file + ":10", "entity Task", "createdAt", "unknown attributeType \"Timestamp\""]
        )
    }

    @Test func currentVersionThatIsMissing() throws {
        let directory = try TemporaryDirectory()
        let folder = directory.file("M.xcdatamodeld")
        try FileManager.default.createDirectory(atPath: folder + "/M.xcdatamodel", withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: Fixtures.demoModel + "/TaskModel.xcdatamodel/contents",
            toPath: folder + "/M.xcdatamodel/contents"
        )
        let marker = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>M 2.xcdatamodel</string></dict></plist>
            """
        _ = try directory.write("M.xcdatamodeld/.xccurrentversion", Array(marker.utf8))
        try expectFailure(
            ["create", directory.file("new.sqlite"), "--model", folder],
            status: 65,
            mentions: [folder + "/.xccurrentversion", "M 2.xcdatamodel"]
        )
    }

    @Test func missingStore() throws {
        try expectFailure(
            ["inspect", "/nonexistent/store.sqlite"],
            status: 66,
            mentions: ["/nonexistent/store.sqlite"]
        )
    }

    @Test func usageErrors() throws {
        let result = try ProductProcess.run("coexistctl", ["inspect", "--frobnicate"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("unknown option --frobnicate"))
        #expect(try ProductProcess.run("coexistctl", ["nonsense"]).status == 64)
        #expect(try ProductProcess.run("coexistctl", ["inspect", "--help"]).status == 0)
    }
}
