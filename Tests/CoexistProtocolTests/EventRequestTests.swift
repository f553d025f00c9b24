import CoexistProtocol
import Foundation
import Testing

/// The one definition of the protocol: what a client encodes the server decodes as the same request, and
/// clients read server messages whatever fields they add.
@Suite struct EventRequestTests {
    @Test func aRequestReadsBackAsItWasBuilt() throws {
        let built = EventRequest(
            "subscribe",
            id: .text("s\"1\n"),
            since: .token(42),
            name: "indexer",
            entities: ["Task", "Category"],
            sides: ["legacy"],
            authors: ["old \"app\""],
            types: ["insert"],
            values: true,
            mirrors: false,
            framing: "transaction"
        )
        #expect(built.line.last == 0x0A)
        let read = try EventRequest.decode(built.line).get()
        #expect(read.op == "subscribe")
        #expect(read.id == .text("s\"1\n"))
        #expect(read.since == .token(42))
        #expect(read.name == "indexer")
        #expect(read.entities == ["Task", "Category"])
        #expect(read.sides == ["legacy"])
        #expect(read.authors == ["old \"app\""])
        #expect(read.types == ["insert"])
        #expect(read.values == true)
        #expect(read.mirrors == false)
        #expect(read.framing == "transaction")

        let wait = try EventRequest.decode(EventRequest("wait", id: .number(-3), token: 9, timeout: 500).line).get()
        #expect((wait.op, wait.id, wait.token, wait.timeout) == ("wait", .number(-3), 9, 500))
        #expect(EventRequest("ping").text == #"{"op":"ping"}"#)
        #expect(try EventRequest.decode(EventRequest("subscribe", since: .now).line).get().since == .now)
    }

    @Test func idsAreNumbersOrShortStrings() {
        for bad in [#"{"op":"ping","id":1.5}"#, #"{"op":"ping","id":[1]}"#, #"{"op":"ping","id":true}"#] {
            guard case .failure(let error) = EventRequest.decode(Array(bad.utf8)) else {
                Issue.record("\(bad) was accepted")
                continue
            }
            #expect(error.code == .invalidRequest)
        }
        let long = #"{"op":"ping","id":""# + String(repeating: "x", count: 201) + #""}"#
        #expect((try? EventRequest.decode(Array(long.utf8)).get()) == nil)
    }

    @Test func messagesAreReadWhateverFieldsTheyAdd() throws {
        let line = #"{"id":7,"type":"waited","token":12,"cursor":15,"later":{"field":[1,2]},"protocol":2}"#
        let message = try #require(ServerMessage.decode(line))
        #expect(message.type == "waited")
        #expect(message.id == .number(7))
        #expect(message.token == 12)
        #expect(message.cursor == 15)
        #expect(message.protocolVersion == 2)
        let event = try #require(ServerMessage.decode(#"{"type":"event","id":"6f1c","pk":17,"entity":"Task"}"#))
        #expect(event.objectID == "6f1c")
        #expect(ServerMessage.decode("not json") == nil)
        #expect(ServerMessage.decode(#"{"token":1}"#) == nil)
    }
}
