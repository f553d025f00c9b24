import CoexistModel
import CoexistProtocol

/// A value an event carries: an attribute's (a to-one's target identity included), or a to-many's.
enum EventValue {
    case attribute(AttributeValue)
    /// A to-many's members' identities (nil: not known yet), in the relationship's order.
    case list([String?])
    /// A to-many with more members than an event lists: how many it has.
    case memberCount(Int)

    /// A to-many's members: in their order when the relationship is ordered, else sorted (unknown last),
    /// so that both sides list one set alike.
    static func members(_ identities: [String?], ordered: Bool) -> EventValue {
        guard !ordered else { return .list(identities) }
        return .list(
            identities.sorted { first, second in
                switch (first, second) {
                case (let first?, let second?): first < second
                case (.some, nil): true
                default: false
                }
            }
        )
    }

    func write(_ writer: inout JSONWriter) {
        switch self {
        case .attribute(let value): EventSource.write(value, &writer)
        case .list(let identities):
            writer.beginArray()
            for identity in identities { writer.string(identity) }
            writer.endArray()
        case .memberCount(let count):
            writer.beginObject()
            writer.key("count")
            writer.integer(Int64(count))
            writer.endObject()
        }
    }
}
