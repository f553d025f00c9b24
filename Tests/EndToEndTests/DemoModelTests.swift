import CoexistDemo
import Foundation
import TestSupport
import Testing

/// The demo model coexistctl carries is the repository's `config/TaskModel.xcdatamodeld`, file for file, and
/// `coexistctl demo` runs from a folder outside the repository into a folder it makes.
@Suite struct DemoModelTests {
    @Test func theCarriedModelIsTheRepositorysModel() throws {
        let folder = Fixtures.repository + "/config/TaskModel.xcdatamodeld"
        var onDisk = try FileManager.default.subpathsOfDirectory(atPath: folder).filter { path in
            var directory: ObjCBool = false
            return FileManager.default.fileExists(atPath: folder + "/" + path, isDirectory: &directory)
                && !directory.boolValue
        }
        onDisk.sort()
        #expect(onDisk == DemoModel.files.map(\.path).sorted())
        for file in DemoModel.files {
            let text = try String(contentsOfFile: folder + "/" + file.path, encoding: .utf8)
            #expect(text == file.text + "\n", "\(file.path) differs from the carried copy")
        }
    }

    @Test func theDemoRunsOutsideTheRepositoryIntoAFolderItMakes() throws {
        let outside = try TemporaryDirectory()
        let target = outside.file("nested/demo")
        let result = try ProductProcess.run(
            "coexistctl",
            ["demo", "--steps", "1", "--directory", target],
            directory: outside.path
        )
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(FileManager.default.fileExists(atPath: target + "/Demo.sqlite"))
        #expect(result.stdout.contains("equal"), "\(result.stdout)")
    }
}
