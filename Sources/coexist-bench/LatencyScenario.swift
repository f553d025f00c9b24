import CoexistProtocol
import CoexistRuntime
import CoexistSQLite
import FoundationEssentials

/// *latency*: a writer process commits single-row transactions at a fixed rate on one side; a subscriber
/// (this process) measures commit → event received, and commit → the bridge's mirror event received (an
/// upper bound of commit → mirrored row committed: the mirror is committed before its event is published);
/// and, from the history afterwards, source save → mirror save (each transaction's `ZTIMESTAMP`, taken as
/// its save writes, just before it commits).
enum LatencyScenario {
    struct Result: Sendable {
        var side: String
        var event: Measure.Distribution
        var mirror: Measure.Distribution
        var mirroredRow: Measure.Distribution
        var missing: Int
    }

    private struct Message: Decodable {
        var type: String
        var token: Int64?
        var side: String?
        var mirror: Bool?
        var id: String?
    }

    /// `idle` more connections stay subscribed to an entity no one writes while the figures are taken: what
    /// a wake-up of the event service costs with that many clients connected.
    static func run(modelPath: String, count: Int, rate: Int, idle: Int = 0) throws -> [Result] {
        try BenchStore.withDaemon(modelPath: modelPath) { store, _ in
            var idleClients: [LineClient] = []
            for _ in 0..<idle {
                let client = try LineClient(path: store.socket)
                try client.send(EventRequest("subscribe", since: .now, entities: ["Category"]).text)
                while true {
                    guard let line = try client.readLine() else {
                        throw BenchError("coexistd closed an idle subscriber before its backlog ended")
                    }
                    if line.contains(#""type":"error""#) { throw BenchError("coexistd refused a client: \(line)") }
                    if line.contains("end_of_backlog") { break }
                }
                idleClients.append(client)
            }
            defer { withExtendedLifetime(idleClients) {} }
            return try ["legacy", "new"].map { try measure(side: $0, store: store, count: count, rate: rate) }
        }
    }

    private static func measure(side: String, store: BenchStore, count: Int, rate: Int) throws -> Result {
        let client = try LineClient(path: store.socket)
        try client.send(EventRequest("subscribe", since: .now, entities: ["Task"], mirrors: true).text)
        while let line = try client.readLine(), !line.contains("end_of_backlog") {}
        let output = store.directory + "/commits-\(side)"
        let writer = try ChildProcess(
            path: ChildProcess.executableDirectory() + "/coexist-bench",
            arguments: ["writer", side, store.path, "\(count)", "\(rate)", output]
        )
        var sourceReceived: [Int64: Int64] = [:]
        var sourceIDs: [String: Int64] = [:]
        var mirrorReceived: [String: Int64] = [:]
        let deadline = Measure.now() + Int64(count / max(rate, 1) + 60) * 1_000_000_000
        let decoder = JSONDecoder()
        while mirrorReceived.count < count || sourceReceived.count < count, Measure.now() < deadline {
            guard let line = try client.readLine() else { throw BenchError("coexistd closed the socket") }
            let received = Measure.now()
            guard let message = try? decoder.decode(Message.self, from: Data(line.utf8)), message.type == "event",
                let token = message.token, let id = message.id
            else { continue }
            if message.mirror == true {
                mirrorReceived[id] = received
            } else if message.side == side {
                sourceReceived[token] = received
                sourceIDs[id] = token
            }
        }
        guard writer.wait() == 0 else { throw BenchError("the \(side) writer failed") }
        var commits: [Int64: Int64] = [:]
        for line in (Measure.readFile(output) ?? "").split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.count == 2, let token = Int64(fields[0]), let time = Int64(fields[1]) { commits[token] = time }
        }
        var events: [Int64] = []
        var mirrors: [Int64] = []
        for (token, committed) in commits {
            if let received = sourceReceived[token] { events.append(received - committed) }
        }
        for (id, token) in sourceIDs {
            if let committed = commits[token], let received = mirrorReceived[id] {
                mirrors.append(received - committed)
            }
        }
        let connection = try Connection(path: store.path, options: OpenOptions(access: .readOnly))
        let saved = try connection.rows(
            """
            SELECT m.ZTIMESTAMP - s.ZTIMESTAMP FROM coexist_mirror c JOIN ATRANSACTION s ON s.Z_PK = c.source_token
            JOIN ATRANSACTION m ON m.Z_PK = c.mirror_token WHERE c.source_side = ?
            """,
            [.text(side)]
        )
        return Result(
            side: side,
            event: Measure.Distribution(events),
            mirror: Measure.Distribution(mirrors),
            mirroredRow: Measure.Distribution(saved.compactMap { $0.first?.numericValue }.map { Int64($0 * 1e9) }),
            missing: (count - events.count) + (count - mirrors.count)
        )
    }
}
