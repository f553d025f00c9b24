import CoexistConfiguration
import CoexistEvents
import CoexistHistory
import CoexistLegacyStore
import CoexistPublish
import CoexistRuntime

/// The messages the publisher sends: one per change (or per transaction), in windows of messages in flight.
extension PublishService {
    /// One message to publish and where the stream stands once it is in.
    struct Pending {
        let mark: Mark
        let outgoing: JetStream.Outgoing
    }

    /// How many messages are in flight at most (sent, their acknowledgements not yet read), and how many
    /// bytes (below the client's 8 MiB buffer; one message at least).
    static let window = 1_024
    static let windowBytes = 4 << 20

    /// The messages of `transaction` past the mark (none for a mirror unless `mirrors`).
    func pending(_ transaction: HistoryTransaction, _ state: State) throws -> [Pending] {
        let isMirror = transaction.author == state.engine.configuration.author
        guard !isMirror || settings.mirrors, Mark(token: transaction.token, index: nil) > state.mark else { return [] }
        return pending(transaction.token, try state.source.events(transaction, values: settings.values), state)
    }

    /// The messages of transaction `token`'s `events` past the mark.
    func pending(_ token: Int64, _ events: [EncodedEvent], _ state: State) -> [Pending] {
        let messages = Self.messages(
            events,
            framing: settings.framing,
            values: settings.values,
            subjects: subjects,
            store: state.store
        )
        var result: [Pending] = []
        for (index, message) in messages.enumerated() {
            let mark = Mark(token: token, index: settings.framing == .event ? index : nil)
            guard mark > state.mark else { continue }
            var data = message.data
            if data.count > state.maximumPayload - 4_096 {
                // Never publishable as it is: a notice in its place keeps the stream whole (the consumer reads
                // the change from the file or the socket), instead of holding everything after it back.
                logger.error(
                    "the message of token \(token) has \(data.count) bytes, more than the server "
                        + "takes: published as an \"oversize\" notice",
                    fields: [.token: "\(token)"]
                )
                data = Array(#"{"type":"oversize","token":\#(token),"index":\#(index),"bytes":\#(data.count)}"#.utf8)
            }
            result.append(
                Pending(
                    mark: mark,
                    outgoing: JetStream.Outgoing(
                        subject: message.subject,
                        data: data,
                        messageID: message.messageID,
                        headers: message.headers
                    )
                )
            )
        }
        return result
    }

    /// The messages of one transaction's events.
    static func messages(
        _ events: [EncodedEvent],
        framing: PublishConfiguration.Framing,
        values: Bool,
        subjects: SubjectTemplate,
        store: String
    ) -> [ChangeMessage] {
        guard let first = events.first else { return [] }
        switch framing {
        case .event:
            // A transaction's changes are mostly of one entity, kind and side: their subject is made once.
            var last: (entity: String?, change: ChangeType, side: String, subject: String)?
            return events.enumerated().map { index, event in
                let line = values ? (event.withValues ?? event.plain) : event.plain
                let subject: String
                if let last, last.entity == event.entity, last.change == event.change, last.side == event.side.rawValue
                {
                    subject = last.subject
                } else {
                    subject = subjects.subject(
                        store: store,
                        entity: event.entity,
                        change: event.change.description,
                        side: event.side.rawValue
                    )
                    last = (event.entity, event.change, event.side.rawValue, subject)
                }
                return ChangeMessage(
                    subject: subject,
                    data: line.payload,
                    store: store,
                    token: event.token,
                    index: index,
                    entity: event.entity,
                    change: event.change.description,
                    side: event.side.rawValue,
                    author: event.author
                )
            }
        case .transaction:
            guard let line = WireLine(transaction: events, values: values) else { return [] }
            // A value every change shares, else `_`.
            let entity = events.allSatisfy { $0.entity == first.entity } ? first.entity : nil
            let change = events.allSatisfy { $0.change == first.change } ? first.change.description : "_"
            return [
                ChangeMessage(
                    subject: subjects.subject(store: store, entity: entity, change: change, side: first.side.rawValue),
                    data: line.payload,
                    store: store,
                    token: first.token,
                    index: nil,
                    entity: entity,
                    change: change,
                    side: first.side.rawValue,
                    author: first.author
                )
            ]
        }
    }
}
