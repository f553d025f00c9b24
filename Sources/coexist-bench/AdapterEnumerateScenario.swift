import CoexistData
import CoexistDemo
import CoexistModel
import CoexistRuntime
import CoexistSQLite
import CoexistStore

/// *adapter-enumerate*: a process enumerates tasks of the new schema with the SwiftData-shaped adapter
/// (`enumerate(batchSize:)`), a tenth of them and all of them: time and peak RSS of each, which must not
/// grow with the count (records are released batch by batch).
enum AdapterEnumerateScenario {
    struct Point: Sendable {
        var rows: Int
        var seconds: Double
        var peakKilobytes: Int
    }

    static func run(modelPath: String, rows: Int, batchSize: Int) throws -> [Point] {
        let store = try BenchStore(modelPath: modelPath)
        defer { store.remove() }
        let connection = try Connection(path: store.path)
        try BenchStore.insertNewTasks(rows, connection)
        var points: [Point] = []
        for size in [max(1, rows / 10), rows] {
            let start = Measure.now()
            let child = try ChildProcess(
                path: ChildProcess.executableDirectory() + "/coexist-bench",
                arguments: ["enumerate-child", store.path, modelPath, "\(size)", "\(batchSize)"],
                quiet: true
            )
            let (status, peak) = child.waitWithPeakMemory()
            guard status == 0 else { throw BenchError("the enumerating process exited \(status)") }
            points.append(Point(rows: size, seconds: Double(Measure.now() - start) / 1e9, peakKilobytes: peak))
        }
        return points
    }

    /// The enumerating process: `coexist-bench enumerate-child STORE MODEL COUNT BATCH` enumerates COUNT
    /// tasks, BATCH at a time; fails unless it saw exactly COUNT.
    static func child(path: String, modelPath: String, count: Int, batchSize: Int) throws {
        let store = try NewStore(path: path, model: try XCDataModelReader.read(path: modelPath))
        let context = try ModelContext(store)
        var seen = 0
        try context.enumerate(FetchDescriptor<DemoTask>(fetchLimit: count), batchSize: batchSize) { task in
            if !task.title.isEmpty { seen += 1 }
        }
        guard seen == count else { throw BenchError("enumerated \(seen) tasks of \(count)") }
    }
}
