import CoexistConfiguration
import Foundation
import TestSupport
import Testing

/// The manual pages in `man/` are what the executables print from their option tables (so they can never
/// list an option the parser does not take), and `man` renders them without a warning.
@Suite struct ManualPageTests {
    @Test(arguments: [
        ("coexistd", ["--man"], "coexistd.8"), ("coexistd", ["--man-config"], "coexistd.conf.5"),
        ("coexistctl", ["--man"], "coexistctl.1"),
    ])
    func theShippedPageIsTheGeneratedOne(_ product: String, _ arguments: [String], _ page: String) throws {
        let generated = try ProductProcess.run(product, arguments)
        #expect(generated.status == 0, "\(generated.stderr)")
        let path = Fixtures.repository + "/man/" + page
        let shipped = try String(contentsOfFile: path, encoding: .utf8)
        #expect(
            shipped == generated.stdout,
            "man/\(page) is stale: regenerate it with \(product) \(arguments.joined(separator: " ")) > man/\(page)"
        )
        let rendered = try ProductProcess.run(
            path: "man",
            ["--warnings", "-l", path],
            environment: ["MANWIDTH": "100", "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"]
        )
        #expect(rendered.status == 0)
        #expect(rendered.stderr.isEmpty, "man warns: \(rendered.stderr)")
        #expect(rendered.stdout.contains(page.split(separator: ".").dropLast().joined(separator: ".").uppercased()))
    }

    /// coexistd.conf(5) documents every key of the table, and the shipped file is the documented text.
    @Test func theConfigurationPageCoversEveryKey() throws {
        let shipped = try String(contentsOfFile: Fixtures.repository + "/config/coexistd.conf", encoding: .utf8)
        #expect(
            shipped == DocumentedConfiguration.text + "\n",
            "config/coexistd.conf differs from DocumentedConfiguration"
        )
        let page = DaemonManual.configuration.roff
        let lines = page.split(separator: "\n", omittingEmptySubsequences: false)
        let terms = zip(lines, lines.dropFirst()).filter { $0.0 == ".TP" }.map { String($0.1) }
        for key in DaemonConfiguration.table {
            let name = key.name.replacingOccurrences(of: "-", with: "\\-")
            #expect(terms.contains { $0.hasPrefix("\\fB\(name) =") || $0.contains(", \(name) =") }, "\(key.name)")
        }
    }

    /// Every option coexistd's parser takes is in its page, and the page lists no other.
    @Test func theDaemonPageListsExactlyTheParsersOptions() throws {
        let page = DaemonManual.daemon.roff
        let listed = Set(
            page.split(separator: "\n").filter { $0.hasPrefix("\\fB\\-\\-") }.map { line in
                String(line.replacingOccurrences(of: "\\-", with: "-").dropFirst(5).prefix { $0 != "\\" })
            }
        )
        #expect(listed == Set(DaemonCommandLine.spec.options.map(\.name)), "\(listed)")
    }
}
