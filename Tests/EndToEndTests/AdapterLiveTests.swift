import CoexistCoreData
import Foundation
import TestSupport
import Testing

/// A process of the new stack (`coexist-data-peer`, on the SwiftData-shaped adapter) driven line by line.
final class PeerProcess {
    let process = Process()
    private let input = Pipe()
    /// Complete reply lines not taken yet, and the start of the next one; guarded by an `NSLock` (which
    /// ThreadSanitizer follows) between the pipe's handler and the test.
    private final class Lines: @unchecked Sendable {
        private let lock = NSLock()
        private var complete: [String] = []
        private var partial = Data()

        func append(_ data: Data) {
            lock.lock()
            defer { lock.unlock() }
            partial.append(data)
            while let newline = partial.firstIndex(of: 0x0A) {
                complete.append(String(decoding: partial[partial.startIndex..<newline], as: UTF8.self))
                partial.removeSubrange(partial.startIndex...newline)
            }
        }

        func next() -> String? {
            lock.lock()
            defer { lock.unlock() }
            return complete.isEmpty ? nil : complete.removeFirst()
        }
    }
    private let lines = Lines()

    init(_ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: ProductProcess.productsDirectory + "/coexist-data-peer")
        process.arguments = arguments
        process.standardInput = input
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        let lines = self.lines
        output.fileHandleForReading.readabilityHandler = { handle in lines.append(handle.availableData) }
        try process.run()
    }

    /// Sends `command` and returns its reply line (30 s at most; "" when none came).
    func ask(_ command: String) -> String {
        input.fileHandleForWriting.write(Data((command + "\n").utf8))
        for _ in 0..<3_000 {
            if let line = lines.next() { return line }
            usleep(10_000)
        }
        return ""
    }

    /// The next remote change the peer merged, decoded.
    func nextChange() throws -> [String: Any] {
        let line = ask("next")
        return try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] ?? ["reply": line]
    }

    deinit {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }
}

/// The acceptance test of live visibility across the two stacks: one process per adapter plus coexistd.
/// Each holds an object; the other process edits, relates and deletes it; each sees the change without
/// fetching again, through a notification that names the token of the transaction that brought it.
@Suite struct AdapterLiveTests {
    @Test func eachAdapterSeesTheOtherStacksCommitsLive() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("Two.sqlite")
        let model = Fixtures.demoModel
        #expect(try ProductProcess.run("coexistctl", ["create", path, "--model", model]).status == 0)
        let daemon = try DaemonProcess(database: path, directory: directory, options: ["--model", model])
        defer { daemon.stop() }
        try daemon.waitUntilServing()

        let context = try ManagedObjectContext(storeAt: path, modelAt: model)
        context.transactionAuthor = "old-app"
        let changes = try context.remoteChanges(from: .coexistd(socket: daemon.socket))
        let watcher = changes.watcher
        let deadline = Task {
            try await Task.sleep(for: .seconds(120))
            watcher.stop()
        }
        defer { deadline.cancel() }
        var remote = changes.makeAsyncIterator()

        /// A task titled `title`, saved and mirrored.
        func insertTask(_ id: UUID, _ title: String) throws -> ManagedObject {
            let task = context.insertNewObject(forEntityName: "Task")
            task.setValue(id, forKey: "id")
            task.setValue(title, forKey: "title")
            task.setValue(Date(), forKey: "createdAt")
            try Coexistd.waitUntilMirrored(through: try #require(try context.save()), socket: daemon.socket)
            return task
        }
        let id = UUID()
        let task = try insertTask(id, "Buy milk")
        // A timeout of any size is taken (clamped), not an overflow.
        #expect(try Coexistd.waitUntilMirrored(through: 0, socket: daemon.socket, timeout: .seconds(Int64.max)) >= 0)
        let peer = try PeerProcess([path, model, daemon.socket])
        let key = id.uuidString
        let lower = key.lowercased()
        #expect(peer.ask("hold \(key)") == "held Buy milk")

        // Core Data edits: the peer's held record shows it, from the bridge's mirror transaction.
        task.setValue("Buy oat milk", forKey: "title")
        let edited = try #require(try context.save())
        var seen = try peer.nextChange()
        #expect(seen["updated"] as? [String] == [lower])
        #expect(seen["author"] as? String == "coexistd")
        #expect((seen["token"] as? Int).map { Int64($0) > edited } == true)
        #expect(((seen["held"] as? [String: Any])?[key] as? [String: Any])?["title"] as? String == "Buy oat milk")

        // The peer edits: the Core Data object shows it without a fetch.
        let renamed = Int64(peer.ask("rename \(key) From the new app").split(separator: " ").last ?? "") ?? -1
        #expect(renamed > 0)
        var change = try #require(try await remote.next())
        #expect(change.updated == [task.objectID])
        #expect(change.author == "coexistd" && change.token > renamed)
        #expect(task.value(forKey: "title") as? String == "From the new app")

        // Relationships, both ways.
        let errands = context.insertNewObject(forEntityName: "Category")
        errands.setValue(UUID(), forKey: "id")
        errands.setValue("Errands", forKey: "name")
        task.setValue(errands, forKey: "category")
        try context.save()
        seen = try peer.nextChange()
        #expect(((seen["held"] as? [String: Any])?[key] as? [String: Any])?["category"] as? String == "Errands")
        #expect(peer.ask("relate \(key) Home").hasPrefix("saved "))
        change = try #require(try await remote.next())
        #expect(change.updated.contains(task.objectID))
        #expect((task.value(forKey: "category") as? ManagedObject)?.value(forKey: "name") as? String == "Home")

        // The peer deletes the object Core Data holds: it leaves the context.
        #expect(peer.ask("delete \(key)").hasPrefix("saved "))
        change = try #require(try await remote.next())
        #expect(change.deleted == [task.objectID])
        #expect(task.isDeleted && task.managedObjectContext == nil)

        // Core Data deletes an object the peer holds: it leaves the peer's context.
        let other = UUID()
        let second = try insertTask(other, "Second")
        #expect(peer.ask("hold \(other.uuidString)") == "held Second")
        seen = try peer.nextChange()  // the insert's mirror
        #expect(seen["inserted"] as? [String] == [other.uuidString.lowercased()])
        context.delete(second)
        try context.save()
        seen = try peer.nextChange()
        #expect(seen["deleted"] as? [String] == [other.uuidString.lowercased()])
        #expect((seen["held"] as? [String: Any])?[other.uuidString] is NSNull)
    }
}
