import CoexistRuntime

#if canImport(Glibc)
import Glibc
#endif

// coexist-bench: the figures the README quotes, from named scenarios. Run in release mode:
//   swift run -c release coexist-bench [latency|write-overhead|idle|all] [--model PATH] [--count N] ...
let arguments = Array(CommandLine.arguments.dropFirst())
do {
    if arguments.first == "writer" {
        guard 6...7 ~= arguments.count, let count = Int(arguments[3]), let rate = Int(arguments[4]),
            let rows = Int(arguments.count == 7 ? arguments[6] : "1"), rows > 0
        else {
            throw BenchError("usage: coexist-bench writer legacy|new STORE COUNT RATE OUT [ROWS]")
        }
        try Writer.run(
            side: arguments[1],
            path: arguments[2],
            count: count,
            rate: rate,
            output: arguments[5],
            rows: rows
        )
        exit(0)
    }
    if arguments.first == "enumerate-child" {
        guard arguments.count == 5, let count = Int(arguments[3]), let batch = Int(arguments[4]) else {
            throw BenchError("usage: coexist-bench enumerate-child STORE MODEL COUNT BATCH")
        }
        try AdapterEnumerateScenario.child(path: arguments[1], modelPath: arguments[2], count: count, batchSize: batch)
        exit(0)
    }
    if arguments.first == "updater" {
        guard arguments.count == 7, let count = Int(arguments[3]), let rate = Int(arguments[4]) else {
            throw BenchError("usage: coexist-bench updater legacy|new STORE COUNT RATE OUT KEY")
        }
        try Updater.run(
            side: arguments[1],
            path: arguments[2],
            count: count,
            rate: rate,
            output: arguments[5],
            key: arguments[6]
        )
        exit(0)
    }
    if arguments.first == "subscribers" {
        guard arguments.count == 7, let count = Int(arguments[2]), let expected = Int(arguments[3]),
            let seconds = Int(arguments[6])
        else {
            throw BenchError("usage: coexist-bench subscribers SOCKET COUNT EXPECTED-EVENTS OUT READY-FILE SECONDS")
        }
        try Subscribers.run(
            socket: arguments[1],
            count: count,
            expectedEvents: expected,
            output: arguments[4],
            ready: arguments[5],
            seconds: seconds
        )
        exit(0)
    }
    if arguments.first == "stream-consumers" {
        guard arguments.count == 8, let count = Int(arguments[3]), let expected = Int(arguments[4]),
            let seconds = Int(arguments[7])
        else {
            throw BenchError(
                "usage: coexist-bench stream-consumers URL STREAM COUNT EXPECTED-CHANGES OUT READY-FILE SECONDS"
            )
        }
        try StreamConsumers.run(
            url: arguments[1],
            stream: arguments[2],
            count: count,
            expected: expected,
            output: arguments[5],
            ready: arguments[6],
            seconds: seconds
        )
        exit(0)
    }
    exit(try BenchCommand.run(arguments).rawValue)
} catch let error as ArgumentParser.UsageError {
    StandardStreams.error("coexist-bench: \(error)\n\n\(BenchCommand.usage)")
    exit(ExitCode.usage.rawValue)
} catch {
    StandardStreams.error("coexist-bench: \(error)")
    exit(ExitCode.failure.rawValue)
}
