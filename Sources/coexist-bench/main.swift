import CoexistRuntime

#if canImport(Glibc)
import Glibc
#endif

// coexist-bench: the figures the README quotes, from named scenarios. Run in release mode:
//   swift run -c release coexist-bench [latency|write-overhead|idle|all] [--model PATH] [--count N] ...
let arguments = Array(CommandLine.arguments.dropFirst())
do {
    if arguments.first == "writer" {
        guard arguments.count == 6, let count = Int(arguments[3]), let rate = Int(arguments[4]) else {
            throw BenchError("usage: coexist-bench writer legacy|new STORE COUNT RATE OUT")
        }
        try Writer.run(side: arguments[1], path: arguments[2], count: count, rate: rate, output: arguments[5])
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
