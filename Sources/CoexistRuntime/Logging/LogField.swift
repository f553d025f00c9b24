/// A structured field of coexist's log lines: a journal field name (`journalctl COEXIST_TOKEN=42`) and what
/// it holds. The one table of them: coexistd(8) lists ``all``.
public struct LogField: Sendable, Hashable {
    /// The journal field name (upper case).
    public let name: String
    /// What the value is.
    public let meaning: String

    init(_ name: String, _ meaning: String) {
        self.name = name
        self.meaning = meaning
    }

    /// A history token (a transaction of the file).
    public static let token = LogField("COEXIST_TOKEN", "the history token (transaction) the message is about")
    /// `legacy` (Core Data's tables) or `new` (the new schema).
    public static let side = LogField("COEXIST_SIDE", "the side: legacy (Core Data's tables) or new (the new schema)")
    /// A model entity.
    public static let entity = LogField("COEXIST_ENTITY", "the entity")
    /// An object: its identity or `Z_PK`.
    public static let object = LogField("COEXIST_OBJECT", "the object (its identity, or its Z_PK)")
    /// A property of the entity.
    public static let property = LogField("COEXIST_PROPERTY", "the property")
    /// What happened, as a word to filter on.
    public static let event = LogField(
        "COEXIST_EVENT",
        "what happened: conflict, parked-transaction, parked-object, retry-failed, fallback, mirror-failed, "
            + "lagged, refused, over-budget, consumer-expired, parked-mirrored, pruned, initial-sync, reloaded, "
            + "reload-failed, migrated"
    )
    /// A connected peer's process id (SO_PEERCRED).
    public static let peerPID = LogField("COEXIST_PEER_PID", "a socket peer's process id")
    /// A connected peer's user id.
    public static let peerUID = LogField("COEXIST_PEER_UID", "a socket peer's user id")
    /// A durable consumer's name.
    public static let consumer = LogField("COEXIST_CONSUMER", "a durable consumer's name")
    /// The database file.
    public static let database = LogField("COEXIST_DATABASE", "the database file")

    /// Every field, in the order the manual lists them.
    public static let all: [LogField] = [
        .event, .token, .side, .entity, .object, .property, .peerPID, .peerUID, .consumer, .database,
    ]
}
