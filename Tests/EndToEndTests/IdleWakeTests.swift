import CoexistSQLite
import Foundation
import TestSupport
import Testing

@testable import CoexistDaemon

/// An idle bridge thread wakes once per second for its two periodic checks (the fallback data-version
/// check and the header check), not once for each, and neither check ever runs later than it was due.
@Suite struct IdleWakeTests {
    @Test func checksWithinHalfASecondMeetAtTheEarlier() {
        let second: UInt64 = 1_000_000_000
        #expect(
            BridgeWorker.aligned(check: 10 * second, header: 10 * second + second / 4) == (10 * second, 10 * second)
        )
        #expect(
            BridgeWorker.aligned(check: 10 * second + second / 4, header: 10 * second) == (10 * second, 10 * second)
        )
        #expect(
            BridgeWorker.aligned(check: 10 * second, header: 10 * second + second / 2) == (10 * second, 10 * second)
        )
        // Further apart (a mirror backoff, a long poll-interval): each keeps its own time.
        #expect(BridgeWorker.aligned(check: 15 * second, header: 10 * second) == (15 * second, 10 * second))
        #expect(BridgeWorker.aligned(check: 10 * second, header: 11 * second) == (10 * second, 11 * second))
        // Never later than given.
        for check in stride(from: UInt64(0), through: 3 * second, by: Int(second / 8)) {
            for header in stride(from: UInt64(0), through: 3 * second, by: Int(second / 8)) {
                let (newCheck, newHeader) = BridgeWorker.aligned(check: check, header: header)
                #expect(newCheck <= check && newHeader <= header)
            }
        }
    }

    @Test func anIdleBridgeWakesAboutOnceASecond() throws {
        let directory = try TemporaryDirectory()
        let path = try SharedStore.create(in: directory).legacy.path
        let daemon = try DaemonProcess(database: path, directory: directory, options: ["--poll-interval", "1s"])
        defer { daemon.stop() }
        try daemon.waitUntilServing()
        let pid = daemon.process.processIdentifier
        // Past the start-up work (catch-up, its checkpoint) first.
        sleep(2)
        let before = try Self.bridgeWakes(pid: pid)
        sleep(4)
        let woken = try Self.bridgeWakes(pid: pid) - before
        // About four; twice as many when each check woke the thread on its own.
        #expect(woken <= 6, "the idle bridge thread woke \(woken) times in 4 s")
    }

    @Test func aCheckpointWakesTheEventThreadOnlyForTheWALItResets() throws {
        let directory = try TemporaryDirectory()
        let path = try SharedStore.create(in: directory).legacy.path
        let daemon = try DaemonProcess(database: path, directory: directory, options: ["--poll-interval", "1s"])
        defer { daemon.stop() }
        try daemon.waitUntilServing()
        // Past the start-up work first: its commits end in a checkpoint, which would take the WAL below.
        sleep(2)
        // A WAL of about 2,000 pages no one checkpoints yet (a table outside the model: nothing to mirror,
        // so the bridge commits nothing and has nothing of its own to checkpoint).
        let connection = try Connection(path: path, options: OpenOptions(access: .readWrite))
        try connection.execute("PRAGMA wal_autocheckpoint = 0")
        try connection.execute("CREATE TABLE scratch (x BLOB)")
        try connection.write {
            for _ in 0..<2_000 { try connection.run("INSERT INTO scratch VALUES (randomblob(3000))") }
        }
        sleep(1)
        let pid = daemon.process.processIdentifier
        let before = try Self.mainThreadWakes(pid: pid)
        // The checkpoint writes the pages to the database file: a commit it is not.
        _ = try connection.rows("PRAGMA wal_checkpoint(TRUNCATE)")
        usleep(500_000)
        let woken = try Self.mainThreadWakes(pid: pid) - before
        // The WAL reset is a change other connections see (the event thread reports it, the bridge signals
        // back): about two. Every database-file write woke it before: 80-384.
        #expect(woken <= 8, "the event thread woke \(woken) times for a checkpoint")
    }

    /// How many times the daemon's bridge thread gave up the processor of its own accord (its sleeps).
    static func bridgeWakes(pid: Int32) throws -> Int { try wakes(of: "coexist-bridge", pid: pid) }

    /// The same for the daemon's main thread (the event thread: its thread ID is the process ID).
    static func mainThreadWakes(pid: Int32) throws -> Int {
        try switches(in: String(contentsOfFile: "/proc/\(pid)/task/\(pid)/status", encoding: .utf8))
    }

    /// The voluntary context switches a `/proc/…/status` text counts.
    static func switches(in status: String) throws -> Int {
        for line in status.split(separator: "\n") where line.hasPrefix("voluntary_ctxt_switches:") {
            if let count = Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) { return count }
        }
        throw CocoaError(.fileReadUnknown)
    }

    /// How many times the daemon's thread called `thread` gave up the processor of its own accord.
    static func wakes(of thread: String, pid: Int32) throws -> Int {
        let tasks = "/proc/\(pid)/task"
        for task in try FileManager.default.contentsOfDirectory(atPath: tasks) {
            let name = (try? String(contentsOfFile: "\(tasks)/\(task)/comm", encoding: .utf8)) ?? ""
            guard name.trimmingCharacters(in: .whitespacesAndNewlines) == thread else { continue }
            return try switches(in: String(contentsOfFile: "\(tasks)/\(task)/status", encoding: .utf8))
        }
        throw CocoaError(.fileReadUnknown)
    }
}
