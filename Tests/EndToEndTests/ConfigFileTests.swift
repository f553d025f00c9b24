import CoexistConfiguration
import Foundation
import TestSupport
import Testing

/// config/coexistd.conf documents every key with its default, and is itself a valid configuration.
@Suite struct ConfigFileTests {
    @Test func documentedConfigurationIsValid() throws {
        let directory = try TemporaryDirectory()
        let path = try SharedStore.create(in: directory).legacy.path
        let text = try String(contentsOfFile: Fixtures.repository + "/config/coexistd.conf", encoding: .utf8)
        let adapted = text.replacingOccurrences(of: "/var/lib/coexist/Store.sqlite", with: path)
            .replacingOccurrences(of: "/run/coexist/coexist.sock", with: directory.file("c.sock"))
        let file = try directory.write("coexistd.conf", Array(adapted.utf8))
        let result = try ProductProcess.run("coexistd", ["--config", file, "--check-config"])
        #expect(result.status == 0, "\(result.stderr)")
        for key in DaemonConfiguration.keys.sorted() {
            #expect(text.contains("\n\(key) ="), "\(key) is documented")
        }
        let publish = try #require(text.range(of: "\n[publish]\n")).upperBound
        for key in PublishConfiguration.keys.map(\.name) {
            #expect(text[publish...].contains("\n\(key) ="), "[publish] \(key) is documented")
        }
        // The documented values are the defaults (but for the database, which has none).
        let documented = try DaemonConfiguration.parse(text, file: "config/coexistd.conf")
        let changed = documented.changes(from: DaemonConfiguration())
        #expect(changed.reloadable + changed.restart == ["database"], "\(changed)")
    }
}
