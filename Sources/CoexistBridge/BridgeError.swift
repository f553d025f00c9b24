/// Why the bridge cannot run, or why one transaction could not be mirrored.
public enum BridgeError: Error, Sendable, CustomStringConvertible {
    /// The configured model and the store's model differ; names both.
    case modelMismatch(String)
    /// Both schemas hold data and the bridge has never run: it cannot tell which side is the truth.
    case bothSidesHaveData(String)
    /// A change that cannot be mirrored (unknown entity, a value the other side cannot hold, a rule).
    case unmirrorable(String)
    /// A legacy object's identity attribute holds the identity another object already has in the new
    /// schema (Core Data does not require it to be unique); names both objects.
    case sharedIdentity(String)
    /// The bridge has never run on the store: its tables and the new schema do not exist yet.
    case notBridged(String)

    public var description: String {
        switch self {
        case .modelMismatch(let text), .bothSidesHaveData(let text), .unmirrorable(let text),
            .sharedIdentity(let text), .notBridged(let text):
            text
        }
    }
}
