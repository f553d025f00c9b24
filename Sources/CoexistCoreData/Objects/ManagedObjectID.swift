public import Foundation
import Synchronization

/// The identity of a managed object (`NSManagedObjectID`): its entity and its key in the store, or a
/// temporary identity until its first save.
///
/// Permanent identities can be kept as URIs (``uriRepresentation()``, `x-coredata://<store UUID>/Task/p12`,
/// as Core Data writes them) and resolved later with
/// ``ManagedObjectContext/managedObjectID(forURIRepresentation:)``.
public struct ManagedObjectID: Sendable, Hashable, CustomStringConvertible {
    /// The object's (concrete) entity.
    public let entityName: String
    /// `Z_PK`, nil while temporary.
    let pk: Int64?
    /// The temporary identity of an object not saved yet: its number in this process.
    let temporary: UInt64?
    /// The store's `Z_UUID`.
    public let storeIdentifier: String

    init(entityName: String, pk: Int64, storeIdentifier: String) {
        self.entityName = entityName
        self.pk = pk
        temporary = nil
        self.storeIdentifier = storeIdentifier
    }

    init(temporaryFor entityName: String, storeIdentifier: String) {
        self.entityName = entityName
        pk = nil
        temporary = TemporaryCounter.shared.count.add(1, ordering: .relaxed).newValue
        self.storeIdentifier = storeIdentifier
    }

    /// `t<UUID of this process><number>`, the shape of Core Data's temporary identities: unique without
    /// asking the kernel for randomness at every new object (Foundation's `UUID()` reads `/dev/urandom`).
    var temporaryText: String { "t\(temporarySession)\(temporary ?? 0)" }

    /// Whether the object has not been saved yet (its identity changes on save).
    public var isTemporaryID: Bool { pk == nil }

    /// `x-coredata://<store>/<Entity>/p<pk>`, or `x-coredata:///<Entity>/t<UUID><number>` while temporary.
    public func uriRepresentation() -> URL {
        let text =
            if let pk {
                "x-coredata://\(storeIdentifier)/\(entityName)/p\(pk)"
            } else {
                "x-coredata:///\(entityName)/\(temporaryText)"
            }
        // Entity names are model identifiers (letters, digits, `_`): the text is always a valid URL.
        return URL(string: text) ?? URL(fileURLWithPath: "/")
    }

    /// Hashes the key (or the temporary number) alone: the entity (the same key in two tables is rare) and
    /// the store's UUID (the same for every identity of a context) only take part in `==`. Hashing no text
    /// keeps a context's identity map cheap to grow.
    public func hash(into hasher: inout Hasher) {
        // One word: a temporary number is hashed as its complement (a key equal to a temporary number's
        // complement hashes alike; `==` tells them apart).
        hasher.combine(pk.map { UInt64(bitPattern: $0) } ?? ~(temporary ?? 0))
    }

    public var description: String {
        pk.map { "\(entityName)/p\($0)" } ?? "\(entityName)/\(temporaryText)"
    }
}

/// The UUID every temporary identity of this process starts with.
private let temporarySession = UUID().uuidString
/// The last temporary identity's number (an atomic held by a class, as the project's other atomics are).
private final class TemporaryCounter: Sendable {
    static let shared = TemporaryCounter()
    let count = Atomic<UInt64>(0)
}
