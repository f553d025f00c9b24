public import CoexistHistory

/// Something the bridge reports while mirroring, for the daemon's log: what happened, in words and as
/// fields (token, side, entity, object, property) a journal can be searched by.
public struct BridgeNotice: Sendable, CustomStringConvertible {
    /// What happened.
    public enum Kind: String, Sendable {
        /// Both sides changed a property; the policy chose (recorded in `coexist_conflict`).
        case conflict
        /// A transaction could not be mirrored and waits in `coexist_parked`.
        case parkedTransaction = "parked-transaction"
        /// An object could not be mirrored and waits in `coexist_parked_object`.
        case parkedObject = "parked-object"
        /// Retrying parked objects failed; they stay parked.
        case retryFailed = "retry-failed"
        /// A snapshot of several transactions failed as a whole; they are mirrored one by one.
        case fallback
    }

    /// What happened.
    public let kind: Kind
    /// The sentence logged.
    public let message: String
    /// The history token concerned (the winner's for a conflict).
    public var token: Int64?
    /// The side concerned (the winner's for a conflict).
    public var side: Side?
    /// The entity concerned (the root entity for a conflict).
    public var entity: String?
    /// The object concerned: its identity, or its `Z_PK`.
    public var object: String?
    /// The property concerned.
    public var property: String?

    /// A notice of `kind`, said as `message`.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
