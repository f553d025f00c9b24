import CoexistHistory
import CoexistLegacyStore
import CoexistStore
import Foundation
import TestSupport
import Testing

/// `"framing":"transaction"`: one message per transaction carrying the same changes, in the same order, as
/// the default one message per change — live and from the backlog, filtered alike.
@Suite struct EventFramingTests {
    /// The changes of `messages` as comparable text, in order: from events, or from transactions' changes.
    private static func changes(_ messages: [[String: Any]]) -> [String] {
        var result: [String] = []
        for message in messages {
            switch message["type"] as? String {
            case "event":
                result.append(describe(message))
            case "transaction":
                let changes = message["changes"] as? [[String: Any]] ?? []
                #expect(message["count"] as? Int == changes.count)
                for change in changes {
                    #expect(change["token"] as? Int == message["token"] as? Int)
                    #expect(change["author"] as? String == message["author"] as? String)
                    result.append(describe(change))
                }
            default:
                continue
            }
        }
        return result
    }

    private static func describe(_ event: [String: Any]) -> String {
        let values = (event["values"] as? [String: Any]).map { $0.keys.sorted().joined(separator: ",") } ?? "-"
        return [
            "\(event["token"] ?? "")", "\(event["index"] ?? "")", "\(event["entity"] ?? "")",
            "\(event["change"] ?? "")", "\(event["id"] ?? "")", values,
        ].joined(separator: " ")
    }

    @Test func transactionFramingCarriesTheSameChangesInTheSameOrder() throws {
        let fixture = try EventFixture()
        func subscribe(_ options: String) throws -> SocketClient {
            let client = try fixture.client()
            let reply = try client.request(#"{"op":"subscribe","since":"now"\#(options)}"#)
            #expect(reply["type"] as? String == "subscribed")
            return client
        }
        let perChange = try subscribe(#","values":true"#)
        let perTransaction = try subscribe(#","values":true,"framing":"transaction""#)
        // Subscribers with the same filters share one encoding of each transaction; without values, another.
        let alike = try subscribe(#","values":true,"framing":"transaction""#)
        let plain = try subscribe(#","framing":"transaction""#)
        let plainPerChange = try subscribe("")
        let filtered = try subscribe(#","entities":["Category"],"framing":"transaction""#)
        let filteredPerChange = try subscribe(#","entities":["Category"]"#)
        #expect(try fixture.client().request(#"{"op":"subscribe","framing":"pages"}"#)["code"] != nil)

        var last: Int64 = 0
        for round in 0..<5 {
            let saved = try fixture.shared.legacy.save(SaveMetadata(author: "old-app")) { save in
                let category = try save.insert(
                    "Category",
                    ["id": .uuid((0..<16).map { _ in UInt8.random(in: 0...255) }), "name": .string("c\(round)")]
                )
                for index in 0..<3 {
                    let task = try save.insert(
                        "Task",
                        [
                            "id": .uuid((0..<16).map { _ in UInt8.random(in: 0...255) }),
                            "title": .string("t\(round).\(index)"), "createdAt": .date(0),
                        ]
                    )
                    try save.setToOne(task, "category", category)
                }
            }
            last = try #require(saved.token)
        }
        let newSide = try fixture.shared.new.save(SaveMetadata(author: "new-app")) { save in
            _ = try save.insert("Task", id: nil, ["title": .string("new"), "createdAt": .date(0)])
        }
        let lastTask = try #require(newSide.token)
        func read(_ client: SocketClient, through token: Int64) throws -> [[String: Any]] {
            try fixture.collect(client) {
                Int64($0["token"] as? Int ?? 0) >= token && $0["type"] as? String != "subscribed"
            }
        }
        let expected = Self.changes(try read(perChange, through: lastTask))
        #expect(expected.count == 5 * 4 + 1)  // a category and its three tasks, five times; one task
        #expect(Self.changes(try read(perTransaction, through: lastTask)) == expected)
        #expect(Self.changes(try read(alike, through: lastTask)) == expected)
        let plainExpected = Self.changes(try read(plainPerChange, through: lastTask))
        #expect(plainExpected.count == expected.count && plainExpected != expected)
        #expect(Self.changes(try read(plain, through: lastTask)) == plainExpected)
        let categories = Self.changes(try read(filteredPerChange, through: last))
        #expect(categories.count == 5)
        #expect(Self.changes(try read(filtered, through: last)) == categories)

        // From the backlog too.
        let replay = try fixture.client()
        replay.send(#"{"op":"subscribe","since":0,"values":true,"framing":"transaction"}"# + "\n")
        let replayed = try fixture.collect(replay) { $0["type"] as? String == "end_of_backlog" }
        #expect(Self.changes(replayed) == expected)
        #expect(replayed.filter { $0["type"] as? String == "transaction" }.count == 6)
    }
}
