import CoexistHistory
import CoexistLegacyStore
import Foundation
import TestSupport
import Testing

/// coexistd binds its socket before a long initial sync and answers `status` with the sync's progress
/// meanwhile; other requests made meanwhile are held and answered once it serves.
@Suite struct StartupTests {
    /// A store with 5,000 tasks on the legacy side only: coexistd's first start copies them (one object per
    /// write with --initial-sync-chunk 1: slow on purpose).
    static func legacyOnlyStore(in directory: TemporaryDirectory) throws -> SharedStore {
        let shared = try SharedStore.create(in: directory)
        try shared.legacy.save(SaveMetadata(author: "old-app")) { save in
            for index in 0..<5_000 {
                var values = DemoStore.mandatoryValues(for: "Task", in: shared.legacy)
                values["id"] = .uuid(withUnsafeBytes(of: UUID().uuid) { Array($0) })
                values["title"] = .string("task \(index)")
                _ = try save.insert("Task", values)
            }
        }
        return shared
    }

    @Test func statusAnswersDuringTheInitialSync() throws {
        let directory = try TemporaryDirectory()
        let shared = try Self.legacyOnlyStore(in: directory)
        let notify = try NotifyListener(path: directory.file("notify"))
        let daemon = try DaemonProcess(
            database: shared.legacy.path,
            directory: directory,
            options: ["--initial-sync-chunk", "1", "--log-level", "info"],
            environment: ["NOTIFY_SOCKET": notify.path]
        )
        defer { daemon.stop() }
        var lines: [String] = []
        var failures: [String] = []
        // Read as it comes, as systemd does (an unread queue of a dozen datagrams once stopped coexistd).
        var messages: [String] = []
        var early: SocketClient?
        // Generous: under the thread sanitizer on a loaded machine the sync takes minutes.
        let deadline = Date().addingTimeInterval(600)
        while Date() < deadline && daemon.process.isRunning {
            let status = try ProductProcess.run("coexistctl", ["status", "--socket", daemon.socket])
            if status.status == 0 {
                lines.append(status.stdout)
                if status.stdout.hasPrefix("starting: initial sync"), early == nil {
                    early = try SocketClient(path: daemon.socket)
                    early?.send(#"{"op":"subscribe","since":0,"id":7}"# + "\n")
                }
                if status.stdout.hasPrefix("cursor") { break }
            } else if early != nil {
                // Once bound, the socket answers `status` through the hand-over to the event server.
                failures.append("exit \(status.status): \(status.stderr)")
            }
            while let message = notify.receive(timeout: 0) { messages.append(message) }
            usleep(50_000)
        }
        #expect(failures.isEmpty, "\(failures.prefix(3))")
        let starting = lines.filter { $0.hasPrefix("starting: initial sync legacy-to-new") }
        #expect(!starting.isEmpty, "no status during the sync: \(lines.prefix(3)) \(daemon.log)")
        #expect(starting.allSatisfy { $0.contains("% (objects of ") || $0.contains("% (relationships of ") })
        #expect(lines.last?.hasPrefix("cursor") == true, "\(lines.suffix(3))")
        // The subscription sent during the sync is answered once coexistd serves.
        let subscribed = try #require(early).readLine()
        #expect(subscribed?.contains(#""type":"subscribed""#) == true, "\(subscribed ?? "nothing")")
        #expect(subscribed?.contains(#""id":7"#) == true)
        #expect(daemon.log.contains("initial sync done: 5000 objects legacy-to-new"), "\(daemon.log)")
        // The progress at info level (the first chunk's at once, then every 5 s), with an ETA in status.
        #expect(daemon.log.contains("info: initial sync legacy-to-new "), "\(daemon.log.prefix(2_000))")
        #expect(starting.contains { $0.contains(" s left") || $0.contains(" min left") }, "\(starting.suffix(3))")
        // systemd heard the progress, with more time for the start each time, before READY=1.
        while let message = notify.receive(timeout: 0.5) { messages.append(message) }
        let ready = messages.firstIndex { $0.contains("READY=1") } ?? messages.count
        let progress = messages[..<ready].filter { $0.contains("STATUS=initial sync legacy-to-new ") }
        #expect(!progress.isEmpty, "\(messages.prefix(5))")
        #expect(progress.allSatisfy { $0.contains("EXTEND_TIMEOUT_USEC=60000000") })
    }

    /// SIGTERM during a long initial sync stops it after the chunk in progress (exit 0, not after the whole
    /// sync: systemd's stop timeout would kill it); the next start resumes it and the store ends equal.
    @Test func aStopDuringTheInitialSyncIsPromptAndResumes() throws {
        let directory = try TemporaryDirectory()
        let shared = try Self.legacyOnlyStore(in: directory)
        let options = ["--initial-sync-chunk", "1"]
        let first = try DaemonProcess(database: shared.legacy.path, directory: directory, options: options)
        var starting = false
        let deadline = Date().addingTimeInterval(300)
        while !starting && Date() < deadline && first.process.isRunning {
            let status = try ProductProcess.run("coexistctl", ["status", "--socket", first.socket])
            starting = status.stdout.hasPrefix("starting: initial sync")
            if !starting { usleep(20_000) }
        }
        #expect(starting, "\(first.log)")
        let stopAsked = Date()
        #expect(first.stop() == 0, "\(first.log)")
        #expect(Date().timeIntervalSince(stopAsked) < 10)
        #expect(first.log.contains("stopped during the initial sync at"), "\(first.log)")
        #expect(!first.log.contains("initial sync done"), "the sync ended before the stop: \(first.log)")
        let second = try DaemonProcess(
            database: shared.legacy.path,
            directory: directory,
            options: ["--initial-sync-chunk", "500"]
        )
        try second.waitUntilServing(timeout: 120)
        #expect(second.stop() == 0)
        #expect(second.log.contains("initial sync done"), "\(second.log)")
        let verify = try ProductProcess.run("coexistctl", ["verify", shared.legacy.path])
        #expect(verify.status == 0, "\(verify.stdout)")
    }
}
