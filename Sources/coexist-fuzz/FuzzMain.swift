import CoexistRuntime

#if canImport(Glibc)
import Glibc
#endif

// coexist-fuzz TARGET [libFuzzer options and corpus folders], TARGET one of events, config, model.
//
// The fuzzing build (`swift build -c release --sanitize=fuzzer -Xswiftc -DCOEXIST_FUZZING --product
// coexist-fuzz`) takes its main from libFuzzer (see FuzzEntry.swift). The ordinary build replays the files
// and folders given (the seed corpora in Tests/Fuzz, crash inputs) through the same code: the test suite
// uses it so.
#if !COEXIST_FUZZING
@main
enum FuzzMain {
    static func main() {
        let arguments = CommandLine.arguments
        guard arguments.count >= 2, let target = FuzzTarget(rawValue: arguments[1]) else {
            StandardStreams.error(FuzzTarget.usage)
            exit(ExitCode.usage.rawValue)
        }
        var replayed = 0
        for path in arguments.dropFirst(2) where !path.hasPrefix("-") {
            for file in Replay.files(path) {
                guard let bytes = Replay.read(file) else {
                    StandardStreams.error("coexist-fuzz: cannot read \(file)")
                    exit(ExitCode.noInput.rawValue)
                }
                _ = bytes.withUnsafeBufferPointer { target.callback($0.baseAddress, $0.count) }
                replayed += 1
            }
        }
        StandardStreams.out("replayed \(replayed) inputs through \(target.rawValue) (not a fuzzing build)")
    }
}
#endif
