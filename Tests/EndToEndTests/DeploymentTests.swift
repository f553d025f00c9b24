import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The README's deployment, run as written into a temporary root, and the shipped unit's sandbox.
@Suite struct DeploymentTests {
    /// The repository root (this file is `Tests/EndToEndTests/DeploymentTests.swift`).
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// `deploy/install --root`: binaries, units, man pages, the coexist user, its folders and the
    /// configuration land where the units expect them; a second run keeps an edited configuration.
    @Test(.enabled(if: getuid() == 0, "systemd-sysusers and chown need root"))
    func installIntoATemporaryRootLeavesAWorkingLayout() throws {
        let directory = try TemporaryDirectory()
        let root = directory.file("root")
        let install = try ProductProcess.run(
            path: Self.repository + "/deploy/install",
            ["--root", root, "--bin-dir", ProductProcess.productsDirectory]
        )
        #expect(install.status == 0, "\(install.stderr)")
        let files = FileManager.default
        for path in [
            "usr/local/bin/coexistd", "usr/local/bin/coexistctl", "etc/systemd/system/coexistd.service",
            "etc/systemd/system/coexistd.socket", "etc/systemd/system/coexistd@.service",
            "etc/systemd/system/coexistd@.socket", "etc/sysusers.d/coexist.conf", "etc/tmpfiles.d/coexist.conf",
            "usr/local/share/man/man8/coexistd.8", "usr/local/share/man/man5/coexistd.conf.5",
            "usr/local/share/man/man1/coexistctl.1",
        ] {
            #expect(files.fileExists(atPath: root + "/" + path), "\(path) is missing")
        }
        // The user the units run as, and the folders tmpfiles.d makes for it.
        let passwd = String(decoding: files.contents(atPath: root + "/etc/passwd") ?? Data(), as: UTF8.self)
        let entry = passwd.split(separator: "\n").first { $0.hasPrefix("coexist:") }?.split(separator: ":")
        let uid = entry.flatMap { UInt32($0[2]) }
        let gid = entry.flatMap { UInt32($0[3]) }
        #expect(uid != nil && gid != nil, "no coexist user in \(passwd)")
        for (path, mode) in [("run/coexist", 0o750), ("var/lib/coexist", 0o2770)] {
            var info = stat()
            #expect(stat(root + "/" + path, &info) == 0, "\(path) is missing")
            #expect(info.st_uid == uid && info.st_gid == gid, "\(path) belongs to \(info.st_uid):\(info.st_gid)")
            #expect(Int(info.st_mode) & 0o7777 == mode, "\(path) has mode \(String(info.st_mode, radix: 8))")
        }
        var conf = stat()
        #expect(stat(root + "/etc/coexist/coexistd.conf", &conf) == 0)
        #expect(Int(conf.st_mode) & 0o7777 == 0o640 && conf.st_gid == gid)

        // The installed daemon accepts the installed configuration once it names a store (its socket
        // directory, /run/coexist, is made by tmpfiles.d at boot: --check-config notes it when missing).
        let store = try SharedStore.create(in: directory).legacy.path
        let check = try ProductProcess.run(
            path: root + "/usr/local/bin/coexistd",
            ["--config", root + "/etc/coexist/coexistd.conf", "--database", store, "--check-config"]
        )
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stdout.contains("configuration OK"))
        // The units as installed: systemd accepts them, and enabling them works offline.
        let enable = try ProductProcess.run(
            path: "systemctl",
            ["--root=" + root, "enable", "coexistd.socket", "coexistd.service", "coexistd@shop.socket"]
        )
        #expect(enable.status == 0, "\(enable.stderr)")
        let link = root + "/etc/systemd/system/sockets.target.wants/coexistd.socket"
        #expect((try? files.destinationOfSymbolicLink(atPath: link)) == "/etc/systemd/system/coexistd.socket")

        // Installing again keeps what the operator wrote in the configuration.
        let edited = Array("database = \(store)\n".utf8)
        #expect(files.createFile(atPath: root + "/etc/coexist/coexistd.conf", contents: Data(edited)))
        let again = try ProductProcess.run(
            path: Self.repository + "/deploy/install",
            ["--root", root, "--bin-dir", ProductProcess.productsDirectory]
        )
        #expect(again.status == 0, "\(again.stderr)")
        #expect(files.contents(atPath: root + "/etc/coexist/coexistd.conf") == Data(edited))
    }

    /// The template unit is the single unit with its instance's files: the two cannot drift apart.
    @Test func theTemplateUnitIsTheSingleUnitPerInstance() throws {
        for (template, single) in [("coexistd@.service", "coexistd.service"), ("coexistd@.socket", "coexistd.socket")] {
            let templateText = try String(contentsOfFile: Self.repository + "/systemd/" + template, encoding: .utf8)
            let singleText = try String(contentsOfFile: Self.repository + "/systemd/" + single, encoding: .utf8)
            let settings = { (text: String) -> [String] in
                text.split(separator: "\n").filter { !$0.hasPrefix("#") && !$0.hasPrefix("Description=") }.map(
                    String.init
                )
            }
            let instance = settings(templateText).map {
                $0.replacingOccurrences(of: "coexistd@%i", with: "coexistd")
                    .replacingOccurrences(of: "/etc/coexist/%i.conf", with: "/etc/coexist/coexistd.conf")
                    .replacingOccurrences(of: "/run/coexist/%i.sock", with: "/run/coexist/coexist.sock")
            }
            #expect(instance == settings(singleText), "\(template) and \(single) differ")
        }
    }

    /// `allow-uids` works under the shipped unit's user-namespace setting: a peer whose uid is listed is
    /// served. (Under `PrivateUsers=yes` every peer reads as 65534 and this fails.)
    @Test(.enabled(if: getuid() == 0, "running a client as another uid needs root"))
    func theAllowlistWorksUnderTheShippedSandbox() throws {
        let unit = try String(contentsOfFile: Self.repository + "/systemd/coexistd.service", encoding: .utf8)
        // Any value but an explicit no (yes, true, self, identity…) maps peers to 65534 or a range.
        let setting = unit.split(separator: "\n").last { $0.hasPrefix("PrivateUsers=") }
        let value = setting.map { $0.dropFirst("PrivateUsers=".count).trimmingCharacters(in: .whitespaces) }
        let privateUsers = value.map { !["", "no", "false", "0", "off"].contains($0) } ?? false
        let directory = try TemporaryDirectory()
        chmod(directory.path, 0o755)
        let store = try SharedStore.create(in: directory).legacy.path
        let daemon = try DaemonProcess(
            database: store,
            directory: directory,
            options: ["--allow-uids", "1000", "--socket-mode", "0666"],
            wrapper: privateUsers ? ["unshare", "--user", "--map-root-user"] : []
        )
        defer { daemon.stop() }
        try daemon.waitUntilServing()
        let script = """
            import socket, sys
            s = socket.socket(socket.AF_UNIX); s.settimeout(10); s.connect(sys.argv[1])
            s.sendall(b'{"op":"ping"}\\n'); print(s.makefile().readline().strip())
            """
        let client = try ProductProcess.run(
            path: "setpriv",
            ["--reuid=1000", "--regid=1000", "--clear-groups", "/usr/bin/python3", "-c", script, daemon.socket]
        )
        #expect(
            client.stdout.contains("\"pong\""),
            "uid 1000 was not served: \(client.stdout) \(client.stderr) \(daemon.log)"
        )
    }
}
