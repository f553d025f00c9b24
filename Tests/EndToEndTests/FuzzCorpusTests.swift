import Foundation
import TestSupport
import Testing

/// The fuzzers' seed corpora (and every crash input added to them) replay through the same code the
/// fuzzers drive, in an ordinary build: a regression test for everything fuzzing ever found.
@Suite struct FuzzCorpusTests {
    @Test(arguments: ["events", "sequence", "config", "model", "modelcache"])
    func corpusReplays(target: String) throws {
        let corpus = Fixtures.repository + "/Tests/Fuzz/" + target
        let count = try FileManager.default.contentsOfDirectory(atPath: corpus).filter { !$0.hasPrefix(".") }.count
        #expect(count > 0)
        let result = try ProductProcess.run("coexist-fuzz", [target, corpus])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("replayed \(count) inputs through \(target)"), "\(result.stdout)")
    }

    @Test func unknownTargetIsAUsageError() throws {
        let result = try ProductProcess.run("coexist-fuzz", ["sql"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("usage: coexist-fuzz events|sequence|config|model|modelcache"))
    }
}
