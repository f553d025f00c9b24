public import Foundation

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
    /// The temporary identity of an object not saved yet.
    let temporary: UUID?
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
        temporary = UUID()
        self.storeIdentifier = storeIdentifier
    }

    /// Whether the object has not been saved yet (its identity changes on save).
    public var isTemporaryID: Bool { pk == nil }

    /// `x-coredata://<store>/<Entity>/p<pk>`, or `x-coredata:///<Entity>/t<UUID>` while temporary.
    public func uriRepresentation() -> URL {
        let text =
            if let pk {
                "x-coredata://\(storeIdentifier)/\(entityName)/p\(pk)"
            } else {
                "x-coredata:///\(entityName)/t\(temporary?.uuidString ?? "")"
            }
        // Entity names are model identifiers (letters, digits, `_`): the text is always a valid URL.
        return URL(string: text) ?? URL(fileURLWithPath: "/")
    }

    public var description: String {
        pk.map { "\(entityName)/p\($0)" } ?? "\(entityName)/t\(temporary?.uuidString ?? "")"
    }
}
