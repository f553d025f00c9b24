import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The README's deployment steps, line by line, into a temporary root: each line the README shows has its
/// stand-in here (a changed or added line fails the test until it gets one), and each stand-in runs.
@Suite struct ReadmeDeploymentTests {
    /// The README's deployment lines and how each runs in a temporary root `R` with the suite's build `B`:
    /// nothing is started (no systemd runs the tests), everything else is done as written.
    static let steps: [(readme: String, standIn: String)] = [
        (
            "swift build -c release --product coexistd && swift build -c release --product coexistctl",
            // The suite's own build stands in for the release build.
            "test -x \"$B/coexistd\" && test -x \"$B/coexistctl\""
        ),
        ("sudo deploy/install", "deploy/install --root \"$R\" --bin-dir \"$B\""),
        (
            "sudoedit /etc/coexist/coexistd.conf     # database = /var/lib/coexist/App.sqlite, model = …",
            "sed -i -e \"s|^database = .*|database = $STORE|\" -e \"s|^model =.*|model = $MODEL|\""
                + " \"$R/etc/coexist/coexistd.conf\""
        ),
        (
            "sudo coexistd --check-config",
            // coexistd reads /etc/coexist/coexistd.conf by default; COEXISTD_CONFIG points it into the root.
            "COEXISTD_CONFIG=\"$R/etc/coexist/coexistd.conf\" \"$R/usr/local/bin/coexistd\" --check-config"
        ),
        (
            "sudo systemctl enable --now coexistd.socket coexistd.service",
            "systemctl --root=\"$R\" enable coexistd.socket coexistd.service"
        ),
        ("man coexistd", "MANPATH=\"$R/usr/local/share/man\" man -P cat coexistd"),
    ]

    @Test(.enabled(if: getuid() == 0, "systemd-sysusers and chown need root"))
    func theDeploymentStepsRunInATemporaryRoot() throws {
        let readme = try String(contentsOfFile: Fixtures.repository + "/README.md", encoding: .utf8)
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let heading = try #require(lines.firstIndex(of: "### Deployment"), "the README has a deployment section")
        let open = try #require(lines[heading...].firstIndex(of: "```sh"), "the deployment section has commands")
        let close = try #require(lines[(open + 1)...].firstIndex(of: "```"))
        let shown = Array(lines[(open + 1)..<close])
        #expect(shown == Self.steps.map(\.readme), "the README's deployment steps changed: give each a stand-in")

        let directory = try TemporaryDirectory()
        let store = try SharedStore.create(in: directory).legacy.path
        var environment = ProcessInfo.processInfo.environment
        environment["R"] = directory.file("root")
        environment["B"] = ProductProcess.productsDirectory
        environment["STORE"] = store
        environment["MODEL"] = Fixtures.demoModel
        environment["MANWIDTH"] = "80"
        for name in ["INVOCATION_ID", "JOURNAL_STREAM", "SYSTEMD_EXEC_PID"] { environment[name] = nil }
        var outputs: [String] = []
        for (readme, standIn) in Self.steps {
            let result = try ProductProcess.run(
                path: "/usr/bin/timeout",
                ["-s", "KILL", "120", "/bin/bash", "-euo", "pipefail", "-c", standIn],
                directory: Fixtures.repository,
                environment: environment
            )
            #expect(result.status == 0, "\(readme): \(result.stderr)")
            outputs.append(result.stdout)
        }
        let root = directory.file("root")
        #expect(outputs[3].contains("configuration OK"), "\(outputs[3])")
        let link = root + "/etc/systemd/system/sockets.target.wants/coexistd.socket"
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: link)) != nil, "the socket is enabled")
        #expect(outputs[5].contains("coexistd"), "the manual page is found: \(outputs[5].prefix(300))")
        let conf = try String(contentsOfFile: root + "/etc/coexist/coexistd.conf", encoding: .utf8)
        #expect(conf.contains("database = \(store)"), "the edit landed")
    }
}
