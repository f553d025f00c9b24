import CoexistConfiguration
import CoexistHistory
import CoexistPublish
import Testing

@testable import CoexistDaemon
@testable import CoexistEvents

/// The messages a transaction's events become: each change's own subject (a transaction's changes are
/// mostly alike, and their subject is made once for a run of alike changes), its event line as the payload
/// without the newline, and its id.
@Suite struct PublishMessagesTests {
    private static func event(_ entity: String?, _ change: ChangeType, _ side: Side, index: Int) -> EncodedEvent {
        EncodedEvent(
            token: 9,
            entity: entity,
            side: side,
            author: "app",
            change: change,
            isMirror: false,
            plain: WireLine(Array(#"{"type":"event","token":9,"index":\#(index)}"#.utf8) + [0x0A], token: 9)
        )
    }

    @Test func eachChangeGetsItsOwnSubjectAndPayload() {
        let changes: [(String?, ChangeType, Side)] = [
            ("Task", .insert, .legacy), ("Task", .insert, .legacy), ("Category", .insert, .legacy),
            ("Category", .update, .legacy), ("Category", .update, .new), ("Task", .insert, .legacy),
            (nil, .delete, .new),
        ]
        let events = changes.enumerated().map { Self.event($1.0, $1.1, $1.2, index: $0) }
        let messages = PublishService.messages(
            events,
            framing: .event,
            values: false,
            subjects: SubjectTemplate("coexist.{store}.{entity}.{change}.{side}"),
            store: "S"
        )
        #expect(
            messages.map(\.subject) == [
                "coexist.S.Task.insert.legacy", "coexist.S.Task.insert.legacy", "coexist.S.Category.insert.legacy",
                "coexist.S.Category.update.legacy", "coexist.S.Category.update.new", "coexist.S.Task.insert.legacy",
                "coexist.S._.delete.new",
            ]
        )
        #expect(
            messages.map(\.data) == events.indices.map { Array(#"{"type":"event","token":9,"index":\#($0)}"#.utf8) }
        )
        #expect(messages.map(\.messageID) == events.indices.map { "S:9:\($0)" })
    }

    @Test func valuesAndTransactionsArePublishedAsEncoded() throws {
        var events = [Self.event("Task", .insert, .legacy, index: 0), Self.event("Task", .update, .legacy, index: 1)]
        events[1].withValues = WireLine(Array(#"{"type":"event","index":1,"values":{}}"#.utf8) + [0x0A], token: 9)
        let template = SubjectTemplate("coexist.{store}.{entity}.{change}")
        let withValues = PublishService.messages(events, framing: .event, values: true, subjects: template, store: "S")
        #expect(
            withValues.map(\.data) == [
                Array(#"{"type":"event","token":9,"index":0}"#.utf8),
                Array(#"{"type":"event","index":1,"values":{}}"#.utf8),
            ]
        )
        let transaction = PublishService.messages(
            events,
            framing: .transaction,
            values: false,
            subjects: template,
            store: "S"
        )
        let line = try #require(WireLine(transaction: events, values: false))
        #expect(transaction.map(\.subject) == ["coexist.S.Task._"])
        #expect(transaction.map(\.data) == [Array(line.array.dropLast())])
        #expect(transaction.map(\.messageID) == ["S:9"])
    }
}
