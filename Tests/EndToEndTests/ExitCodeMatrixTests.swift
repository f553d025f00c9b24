import CoexistLegacyStore
import CoexistModel
import CoexistSQLite
import Foundation
import TestSupport
import Testing

/// Every coexistctl subcommand and coexistd, against every class of bad input: the exit code is the README
/// table's, the message names what was wrong, and the folder holding the inputs is exactly as it was (names
/// and bytes): a refused file is never touched, and a refused command creates nothing.
@Suite struct ExitCodeMatrixTests {
    /// One command line (placeholders `$name` stand for the inputs below), the code it must exit with, and a
    /// text its message must contain.
    struct Case: Sendable, CustomTestStringConvertible {
        var line: String
        var code: Int32
        var mentions: String
        init(_ line: String, _ code: Int32, _ mentions: String) {
            self.line = line
            self.code = code
            self.mentions = mentions
        }
        var testDescription: String { "\(line) → \(code)" }
    }

    static let cases: [Case] = [
        // inspect
        Case("coexistctl inspect $missing", 66, "missing.sqlite"), Case("coexistctl inspect $text", 65, "text.sqlite"),
        Case("coexistctl inspect $empty", 65, "empty.sqlite"), Case("coexistctl inspect $plain", 65, "plain.sqlite"),
        Case("coexistctl inspect", 64, "missing argument"), Case("coexistctl inspect $text $text", 64, "unexpected"),
        Case("coexistctl inspect $nohist --json --json", 64, "--json is given twice"),
        Case("coexistctl inspect $nohist --model $missing", 66, "missing.sqlite"),
        Case("coexistctl inspect $nohist --model $badmodel", 65, "bad.xcdatamodel/contents:2"),
        Case("coexistctl inspect $nohist --frob", 64, "--frob"),
        // history
        Case("coexistctl history", 64, "list, show, stats, replay, export, import or prune"),
        Case("coexistctl history frob $text", 64, "frob"),
        Case("coexistctl history list $missing", 66, "missing.sqlite"),
        Case("coexistctl history list $text", 65, "text.sqlite"), Case("coexistctl history list $empty", 65, "empty"),
        Case("coexistctl history list $plain", 65, "Z_METADATA"),
        Case("coexistctl history list $nohist", 65, "persistent-history"),
        Case("coexistctl history list $nohist --since -1", 64, "since"),
        Case("coexistctl history list $nohist --limit x", 64, "limit"),
        // An option of another verb is refused, not ignored.
        Case("coexistctl history list $nohist --into x", 64, "history list does not take --into"),
        Case("coexistctl history list $nohist --yes", 64, "history list does not take --yes"),
        Case("coexistctl history show $nohist 3 --limit 2", 64, "history show does not take --limit"),
        Case("coexistctl history show $nohist 3 --values", 64, "history show does not take --values"),
        Case("coexistctl history export $nohist --author a", 64, "history export does not take --author"),
        Case("coexistctl history stats $nohist --events", 64, "history stats does not take --events"),
        Case("coexistctl history import $nohist --into $nohist --json", 64, "history import does not take --json"),
        Case("coexistctl consumers list $nohist --to 5", 64, "consumers list does not take --to"),
        Case("coexistctl history show $nohist 1", 65, "persistent-history"),
        Case("coexistctl history show $text abc", 64, "TOKEN"), Case("coexistctl history show $text", 64, "missing"),
        Case("coexistctl history prune $missing --before 1", 66, "missing.sqlite"),
        Case("coexistctl history prune $text --before 1", 65, "text.sqlite"),
        Case("coexistctl history prune $empty --before 1", 65, "empty.sqlite"),
        Case("coexistctl history prune $plain --before 1", 65, "Z_METADATA"),
        Case("coexistctl history prune $nohist --before 1", 65, "persistent-history"),
        Case("coexistctl history prune $nohist", 64, "--before"),
        Case("coexistctl history prune $nohist --before 1 --before 2", 64, "--before is given twice"),
        Case("coexistctl history prune $nohist --older-than 3x", 64, "--older-than"),
        Case("coexistctl history prune $nohist --before 1 --older-than 2d", 64, "one of --before"),
        Case("coexistctl history list $nohist --after soon", 64, "--after"),
        Case("coexistctl history list $nohist --type upsert", 64, "--type"),
        Case("coexistctl history stats $nohist", 65, "persistent-history"),
        Case("coexistctl history stats $missing", 66, "missing.sqlite"),
        Case("coexistctl history replay $nohist --events", 64, "--from"),
        Case("coexistctl history replay $nohist --from 1", 64, "--events"),
        Case("coexistctl history replay $nohist --from 5 --to 2 --events", 64, "before --from"),
        Case("coexistctl history replay $nohist --from 1 --events", 1, "never"),
        Case("coexistctl history replay $nohist --from 1 --into sideways", 64, "--into"),
        Case("coexistctl history replay $nohist --from 1 --into new", 1, "never"),
        Case("coexistctl history import $text", 64, "--into"),
        Case("coexistctl history import $missing --into $nohist", 66, "missing.sqlite"),
        Case("coexistctl history import $text --into $nohist", 65, "persistent-history"),
        Case("coexistctl history export $nohist", 65, "persistent-history"),
        // consumers, parked, conflicts
        Case("coexistctl consumers", 64, "list, reset or drop"),
        Case("coexistctl consumers list $missing", 66, "missing.sqlite"),
        Case("coexistctl consumers list $plain", 65, "Z_METADATA"),
        Case("coexistctl consumers reset $nohist someone --to 1", 65, "no durable consumer"),
        Case("coexistctl consumers drop $nohist", 64, "missing"),
        Case("coexistctl parked", 64, "list, retry or drop"), Case("coexistctl parked list $text", 65, "text.sqlite"),
        Case("coexistctl parked retry $nohist", 1, "never"), Case("coexistctl parked drop $nohist --all", 1, "never"),
        Case("coexistctl conflicts", 64, "conflicts list"), Case("coexistctl conflicts list $missing", 66, "missing"),
        Case("coexistctl conflicts list $nohist --since soon", 64, "--since"),
        // schema
        Case("coexistctl schema", 64, "--model"), Case("coexistctl schema --model $missing", 66, "missing.sqlite"),
        Case("coexistctl schema --model $badmodel", 65, "contents:2"),
        Case("coexistctl schema --model $model --sql --sql", 64, "--sql is given twice"),
        // verify
        Case("coexistctl verify $missing", 66, "missing.sqlite"), Case("coexistctl verify $text", 65, "text.sqlite"),
        Case("coexistctl verify $empty", 65, "empty.sqlite"), Case("coexistctl verify $plain", 65, "Z_METADATA"),
        Case("coexistctl verify $nohist", 1, "never"), Case("coexistctl verify --config $badconf", 78, "bad.conf:2"),
        Case("coexistctl verify", 64, "name the store"), Case("coexistctl verify $nohist --dry-run", 64, "--repair"),
        Case("coexistctl verify $nohist --repair", 1, "never"),
        Case("coexistctl verify $nohist --repair --from sideways", 64, "--from"),
        Case("coexistctl verify $nohist --limit x", 64, "--limit"),
        // status
        Case("coexistctl status --socket $nosock", 69, "none.sock"),
        Case("coexistctl status --socket $text", 69, "text.sqlite"),
        Case("coexistctl status --config $badconf", 78, "bad.conf:2"),
        Case("coexistctl status --socket $nosock extra", 64, "unexpected"),
        Case("coexistctl status --socket $nosock --socket $nosock", 64, "--socket is given twice"),
        // tail: every argument is checked before anything connects
        Case("coexistctl tail --socket $nosock", 69, "none.sock"),
        Case("coexistctl tail --config $badconf", 78, "bad.conf:2"),
        Case("coexistctl tail --socket $nosock --side bogus", 64, "--side"),
        Case("coexistctl tail --socket $nosock --count 0", 64, "--count"),
        Case("coexistctl tail --socket $nosock --count x", 64, "--count"),
        Case("coexistctl tail --socket $nosock --since -1", 64, "--since"),
        Case("coexistctl tail --socket $nosock --since abc", 64, "--since"),
        Case("coexistctl tail --socket $nosock --name=", 64, "--name"),
        Case("coexistctl tail --socket $nosock --entity Task --entity Category --values --values", 64, "--values"),
        // wait
        Case("coexistctl wait", 64, "missing"), Case("coexistctl wait abc", 64, "TOKEN"),
        Case("coexistctl wait -1", 64, "TOKEN"),
        Case("coexistctl wait 1 --socket $nosock --timeout x", 64, "--timeout"),
        Case("coexistctl wait 1 --socket $nosock --timeout 600001", 64, "--timeout"),
        Case("coexistctl wait 1 --socket $nosock", 69, "none.sock"),
        Case("coexistctl wait 1 --config $badconf", 78, "bad.conf:2"),
        // create
        Case("coexistctl create $text --model $model", 73, "already there"),
        Case("coexistctl create $nohist --model $model", 73, "already there"),
        Case("coexistctl create $dir/nofolder/x.sqlite --model $model", 73, "folder"),
        Case("coexistctl create $dir/new.sqlite", 64, "--model"),
        Case("coexistctl create $dir/new.sqlite --model $missing", 66, "missing.sqlite"),
        Case("coexistctl create $dir/new.sqlite --model $badmodel", 65, "contents:2"),
        // demo
        Case("coexistctl demo --steps 0", 64, "--steps"), Case("coexistctl demo --steps abc", 64, "--steps"),
        Case("coexistctl demo --model $missing", 66, "missing.sqlite"),
        Case("coexistctl demo --model $badmodel", 65, "contents:2"),
        Case("coexistctl frobnicate", 64, "frobnicate"),
        // coexistd, and its --check-config
        Case("coexistd --database $missing --socket $nosock", 66, "missing.sqlite"),
        Case("coexistd --database $text --socket $nosock", 65, "text.sqlite"),
        Case("coexistd --database $empty --socket $nosock", 65, "empty.sqlite"),
        Case("coexistd --database $plain --socket $nosock", 65, "plain.sqlite"),
        Case("coexistd --database $plain --socket $nosock --check-config", 65, "plain.sqlite"),
        Case("coexistd --config $badconf", 78, "bad.conf:2"),
        Case("coexistd --config $badconf --check-config", 78, "bad.conf:2"),
        Case("coexistd --database $nohist --database $nohist", 64, "--database is given twice"),
        Case("coexistd --database $nohist --model $badmodel --socket $nosock", 65, "contents:2"),
        Case("coexistd --frobnicate", 64, "--frobnicate"),
    ]

    @Test(arguments: cases)
    func exitCode(_ testCase: Case) throws {
        let directory = try TemporaryDirectory()
        let inputs = try Self.makeInputs(in: directory)
        var words = testCase.line.split(separator: " ").map { word in
            inputs.reduce(String(word)) { $0.replacingOccurrences(of: "$" + $1.key, with: $1.value) }
        }
        let product = words.removeFirst()
        let before = try Self.snapshot(directory.path)
        let result = try ProductProcess.run(product, words, directory: directory.path)
        #expect(result.status == testCase.code, "\(result.stderr)")
        #expect(result.stderr.contains(testCase.mentions), "\(result.stderr)")
        #expect(try Self.snapshot(directory.path) == before, "the command changed the folder of its inputs")
    }

    /// The bad inputs, each a file in `directory` (and the good model, from the repository).
    static func makeInputs(in directory: TemporaryDirectory) throws -> [String: String] {
        let text = Array(
            "hello: a text file of well over one hundred bytes, so that a header check has enough to read.\n".utf8
        )
        _ = try directory.write("text.sqlite", text)
        _ = try directory.write("empty.sqlite", [])
        let plain = try Connection(
            path: directory.file("plain.sqlite"),
            options: OpenOptions(access: .readWriteCreate, walMode: false, coreDataTriggerFunctions: false)
        )
        try plain.execute("CREATE TABLE t (x); INSERT INTO t VALUES (1)")
        let model = try XCDataModelReader.read(path: Fixtures.demoModel)
        _ = try StoreCreator.create(
            path: directory.file("nohist.sqlite"),
            model: model,
            options: StoreCreator.Options(history: false)
        )
        try FileManager.default.createDirectory(
            atPath: directory.file("bad.xcdatamodel"),
            withIntermediateDirectories: false
        )
        _ = try directory.write("bad.xcdatamodel/contents", Array("<model>\n<entity".utf8))
        _ = try directory.write("bad.conf", Array("# a key coexistd does not know\nfoo = 1\n".utf8))
        return [
            "missing": directory.file("missing.sqlite"), "text": directory.file("text.sqlite"),
            "empty": directory.file("empty.sqlite"), "plain": directory.file("plain.sqlite"),
            "nohist": directory.file("nohist.sqlite"), "badmodel": directory.file("bad.xcdatamodel"),
            "badconf": directory.file("bad.conf"), "nosock": directory.file("none.sock"), "model": Fixtures.demoModel,
            "dir": directory.path,
        ]
    }

    /// Every file under `path` with its bytes.
    static func snapshot(_ path: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(atPath: path)
        while let name = enumerator?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            let full = path + "/" + name
            guard FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory) else { continue }
            files[name] = isDirectory.boolValue ? Data() : try Data(contentsOf: URL(fileURLWithPath: full))
        }
        return files
    }
}
