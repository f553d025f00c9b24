import CoexistBridge
import CoexistHistory
import CoexistLegacyStore
import CoexistModel
import CoexistRuntime
import CoexistSQLite
import FoundationEssentials
import Glibc

/// `coexistctl history export` and `history import`: the history as NDJSON (``HistoryArchive``).
enum HistoryArchiveCommands {
    /// Writes the transactions in (`since`, `until`] of `store` as NDJSON to `output` (standard output
    /// when nil; a file is created, never overwritten); a summary on standard error.
    static func export(_ store: LegacyStore, since: Int64, until: Int64, output: String?) throws -> ExitCode {
        let reader = try HistoryReader(store: store)
        let descriptor: Int32
        if let output {
            descriptor = open(output, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else {
                throw SystemError(call: "create", code: errno, subject: output, detail: "cannot create the export")
            }
        } else {
            descriptor = STDOUT_FILENO
        }
        defer { if output != nil { close(descriptor) } }
        let encoder = HistoryArchive.encoder()
        let progress = ProgressLine()
        var filter = HistoryFilter()
        filter.since = since
        filter.until = until
        var count = 0
        while true {
            // Each page from one snapshot: a prune between its reads cannot leave a transaction half read.
            let (page, archived) = try store.connection.read {
                let page = try reader.transactions(matching: filter, limit: 256)
                return (page, try HistoryArchive.archive(page, connection: store.connection))
            }
            guard let last = page.last else { break }
            var bytes: [UInt8] = []
            for transaction in archived {
                bytes += try encoder.encode(transaction)
                bytes.append(UInt8(ascii: "\n"))
            }
            try write(bytes, to: descriptor, path: output ?? "standard output")
            count += page.count
            filter.since = last.token
            progress.update("exported \(count) transactions (token \(last.token))")
        }
        progress.finish()
        StandardStreams.error("exported \(count) transactions from \(store.path)")
        return .success
    }

    /// Imports the NDJSON file `input` into the history of `path` (a Core Data store of the same model, its
    /// history empty or older than the file's tokens), in one transaction, under the daemon's lock.
    static func `import`(_ input: String, into path: String) throws -> ExitCode {
        guard access(input, R_OK) == 0 else {
            throw SystemError(call: "open", code: errno, subject: input, detail: "cannot read the import")
        }
        let probe = try LegacyStore(path: path)
        guard probe.hasHistory else {
            throw LegacyStoreError.notCoreDataStore(
                path: path,
                reason: "no persistent-history tables: import into a store made with coexistctl create (with history)"
            )
        }
        guard try !probe.connection.tableExists("coexist_bridge") else {
            throw ArgumentParser.UsageError(
                "\(path) is bridged: its coexistd would take the imported history for new changes; import into a scratch store"
            )
        }
        let identity = try DatabaseFileIdentity(path: path)
        try identity.serveExclusively()
        let numbers = Dictionary(
            probe.primaryKeys.filter { !PrimaryKeyRow.historyNumbers.contains($0.number) }.map { ($0.name, $0.number) },
            uniquingKeysWith: { first, _ in first }
        )
        let connection = try Connection(path: path)
        let progress = ProgressLine()
        let count: Int
        do {
            count = try connection.write { try importLines(input, connection, numbers, progress) }
        } catch var error as HistoryArchive.ImportError {
            error.file = input
            throw error
        }
        progress.finish()
        StandardStreams.out("imported \(count) transactions into \(path)")
        return .success
    }

    /// The import's write transaction: every line of `input`; returns how many transactions it held.
    private static func importLines(
        _ input: String,
        _ connection: Connection,
        _ numbers: [String: Int],
        _ progress: ProgressLine
    ) throws -> Int {
        let decoder = HistoryArchive.decoder()
        var importer = try HistoryArchive.Importer(connection: connection, entityNumbers: numbers)
        var number = 0
        var count = 0
        try LineFile(path: input).forEachLine { line in
            number += 1
            guard !line.isEmpty else { return }
            let transaction: HistoryArchive.Transaction
            do {
                transaction = try decoder.decode(HistoryArchive.Transaction.self, from: Data(line))
            } catch {
                throw HistoryArchive.ImportError(line: number, reason: "not an archived transaction: \(error)")
            }
            try importer.write(transaction, line: number)
            count += 1
            progress.update("imported \(count) transactions (token \(transaction.token))")
        }
        try importer.finish()
        return count
    }

    private static func write(_ bytes: [UInt8], to descriptor: Int32, path: String) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes {
                Glibc.write(descriptor, $0.baseAddress! + offset, bytes.count - offset)
            }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { throw SystemError(call: "write", code: errno, subject: path, detail: "export") }
            offset += written
        }
    }
}

/// Reads a file line by line in bounded memory: lines longer than 64 MiB are refused.
struct LineFile {
    let path: String
    static let maximumLine = 64 << 20

    func forEachLine(_ body: ([UInt8]) throws -> Void) throws {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw SystemError(call: "open", code: errno, subject: path, detail: "cannot read it")
        }
        defer { close(descriptor) }
        var pending: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress!, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw SystemError(call: "read", code: errno, subject: path, detail: "import") }
            if count == 0 { break }
            var start = 0
            for index in 0..<count where chunk[index] == UInt8(ascii: "\n") {
                pending += chunk[start..<index]
                try body(pending)
                pending.removeAll(keepingCapacity: true)
                start = index + 1
            }
            pending += chunk[start..<count]
            guard pending.count <= Self.maximumLine else {
                throw SystemError(call: "read", code: EFBIG, subject: path, detail: "a line longer than 64 MiB")
            }
        }
        if !pending.isEmpty { try body(pending) }
    }
}
