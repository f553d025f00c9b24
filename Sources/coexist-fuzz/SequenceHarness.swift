import CoexistBridge
import CoexistEvents
import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistRuntime
import CoexistSQLite
import CoexistStore

#if canImport(Glibc)
import Glibc
#endif

/// The stateful target: each input is a sequence of request lines sent over one connection to a real
/// ``EventServer`` (a real Unix socket, a real store in a temporary folder, kept across inputs so that
/// consumers, acks and history accumulate). After each input the connection closes, and the server must
/// hold nothing for it any more: no queued byte, no filter set, no wait. Anything else stops the fuzzer.
final class SequenceHarness {
    let directory: String
    let server: EventServer
    let store: LegacyStore
    /// The connection the harness records consumers' positions on, as the daemon's bridge thread does.
    let connection: Connection
    var inputs = 0
    /// The server's clock: monotonic, and moved ahead by the harness so that timeouts and grace periods
    /// pass without waiting; never backwards.
    var clock: UInt64 = 0

    /// The demo Task/Category model, inline so that the harness needs no file.
    static let model = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" userDefinedModelVersionIdentifier="2.0.0">
            <entity name="Category" representedClassName="CDCategory" syncable="YES">
                <attribute name="id" attributeType="UUID" usesScalarValueType="NO" preserveAfterDeletion="YES"/>
                <attribute name="name" attributeType="String" defaultValueString=""/>
                <relationship name="tasks" optional="YES" toMany="YES" deletionRule="Cascade"
                    destinationEntity="Task" inverseName="category" inverseEntity="Task"/>
            </entity>
            <entity name="Task" representedClassName="CDTask" syncable="YES">
                <attribute name="createdAt" attributeType="Date" usesScalarValueType="NO"/>
                <attribute name="id" attributeType="UUID" usesScalarValueType="NO" preserveAfterDeletion="YES"/>
                <attribute name="title" attributeType="String" defaultValueString=""/>
                <relationship name="category" optional="YES" maxCount="1" deletionRule="Nullify"
                    destinationEntity="Category" inverseName="tasks" inverseEntity="Category"/>
            </entity>
        </model>
        """

    init() throws {
        // SIGPIPE keeps its default (the end of the process): the server must never raise it, whatever its
        // peers do (it writes with MSG_NOSIGNAL).
        var template = Array("/tmp/coexist-fuzz.XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw SystemError(call: "mkdtemp", code: errno)
        }
        directory = String(cString: made)
        let model = try XCDataModelReader.decodeContents(Array(Self.model.utf8), file: "fuzz model")
        store = try StoreCreator.create(path: directory + "/Fuzz.sqlite", model: model)
        for index in 0..<12 {
            _ = try store.save(SaveMetadata(author: index % 2 == 0 ? "old-app" : "other")) { save in
                _ = try save.insert(
                    "Task",
                    ["id": .uuid(UUIDText.randomBytes()), "title": .string("t\(index)"), "createdAt": .date(0)]
                )
            }
        }
        let engine = try SyncEngine(connection: try Connection(path: store.path), model: nil)
        try engine.initialSyncIfNeeded()
        _ = try engine.catchUp()
        var limits = EventServer.Limits()
        limits.maxLineLength = 4_096
        limits.maxPendingRequests = 64
        limits.maxConsumers = 8
        limits.queueLimit = 64
        limits.queueBytes = 64 << 10
        try ConsumerTable.create(engine.connection)
        connection = engine.connection
        server = try EventServer(
            listener: try UnixListener(path: directory + "/f.sock", mode: 0o600),
            engine: engine,
            limits: limits,
            logger: Logger(identifier: "coexist-fuzz", level: .error, forceStderr: true),
            consumers: ConsumerOutbox()
        )
    }

    /// The harness, or the end of the process when it cannot be set up.
    static func make() -> SequenceHarness {
        do {
            return try SequenceHarness()
        } catch {
            StandardStreams.error("coexist-fuzz: cannot set up the sequence target: \(error)")
            exit(ExitCode.software.rawValue)
        }
    }

    /// Sends `bytes` over a fresh connection, lets the server answer, closes, and checks the server let
    /// everything of the connection go.
    func run(_ bytes: [UInt8]) {
        inputs += 1
        // A commit now and then (a bounded number: backlogs stay small, a little over two backlog pages), so
        // that subscriptions have something to deliver.
        if inputs % 97 == 0 && inputs < 2_500 {
            _ = try? store.save(SaveMetadata(author: "old-app")) { save in
                _ = try save.insert(
                    "Task",
                    ["id": .uuid(UUIDText.randomBytes()), "title": .string("x"), "createdAt": .date(0)]
                )
            }
            try? server.publish(now: clock)
        }
        guard let client = try? LineClient.connect(path: directory + "/f.sock") else { return }
        let flags = fcntl(client, F_GETFL)
        _ = fcntl(client, F_SETFL, flags | O_NONBLOCK)
        clock = max(clock + 1, Monotonic.now())
        var now = clock
        pump(now)
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count <= 0 { break }
            sent += count
            pump(now)
            drain(client)
        }
        for _ in 0..<3 {
            now += 60_000_000
            pump(now)
            drain(client)
        }
        close(client)
        now += 2_000_000_000
        pump(now)
        // What the closing connection posted last is recorded, as the daemon's bridge thread would next.
        _ = try? server.consumers.write(to: connection)
        clock = now
        let held = server.resourcesHeld
        guard held.clients == 0, held.queuedBytes == 0, held.filterSets == 0, held.waits == 0, held.registrations == 0,
            server.consumers.pendingCount == 0
        else {
            StandardStreams.error(
                "coexist-fuzz: the server still holds \(held), \(server.consumers.pendingCount) consumer "
                    + "positions unrecorded, after the connection closed"
            )
            abort()
        }
    }

    /// Lets the server accept, read, answer and tick until nothing is ready (at most four rounds).
    private func pump(_ now: UInt64) {
        for _ in 0..<4 {
            _ = try? server.consumers.write(to: connection)
            var descriptors = server.descriptors(now: now)
            guard poll(&descriptors, nfds_t(descriptors.count), 0) > 0 else {
                server.tick(now: now)
                return
            }
            for descriptor in descriptors where descriptor.revents != 0 { server.handle(descriptor, now: now) }
            server.tick(now: now)
        }
    }

    private func drain(_ client: Int32) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while buffer.withUnsafeMutableBytes({ read(client, $0.baseAddress, $0.count) }) > 0 {}
    }
}
