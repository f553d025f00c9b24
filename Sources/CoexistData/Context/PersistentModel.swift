import CoexistModel
import CoexistStore
import Foundation

/// A record type of the new schema: a class with one Swift property per model property it uses, and a
/// ``RecordSchema`` that maps each Swift key path to the model's property name.
///
/// This is coexist's stand-in for SwiftData's `@Model` (no macros beyond the toolchain's can be used):
///
/// ```swift
/// final class Task: PersistentModel {
///     var id = UUID()
///     var title = ""
///     var category: Category?
///     static let schema = RecordSchema<Task>(entity: "Task", [
///         .attribute("id", \.id), .attribute("title", \.title), .toOne("category", \.category),
///     ])
///     required init() {}
/// }
/// ```
///
/// Identity is object identity: records are `Hashable` by reference, as SwiftData models are.
public protocol PersistentModel: AnyObject, Hashable {
    /// The entity and the property mapping.
    static var schema: RecordSchema<Self> { get }
    /// An empty record, filled in by a context when fetched.
    init()
}

extension PersistentModel {
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    /// The schema without its root type, for code that handles records of any type: built once per type
    /// (from ``schema``, read then) and kept.
    static var erasedSchema: ErasedSchema {
        let key = ObjectIdentifier(Self.self)
        if let known = ErasedSchemaCache.shared.schema(key) { return known }
        let built = ErasedSchema(schema)
        ErasedSchemaCache.shared.keep(built, key)
        return built
    }
}

/// Erased schemas by record type: each is built once, not at every record a fetch makes. Guarded by an
/// `NSLock` (a pthread mutex, which ThreadSanitizer follows; `Synchronization.Mutex` waits on a futex it
/// cannot see).
private final class ErasedSchemaCache: @unchecked Sendable {
    static let shared = ErasedSchemaCache()
    private let lock = NSLock()
    private var schemas: [ObjectIdentifier: ErasedSchema] = [:]

    func schema(_ key: ObjectIdentifier) -> ErasedSchema? {
        lock.lock()
        defer { lock.unlock() }
        return schemas[key]
    }

    func keep(_ schema: ErasedSchema, _ key: ObjectIdentifier) {
        lock.lock()
        defer { lock.unlock() }
        schemas[key] = schema
    }
}

/// The mapping of a record type: its entity and properties.
public struct RecordSchema<Root: PersistentModel>: @unchecked Sendable {
    /// The model entity (a concrete one).
    public let entity: String
    let properties: [RecordProperty<Root>]

    /// Creates a mapping.
    public init(entity: String, _ properties: [RecordProperty<Root>]) {
        self.entity = entity
        self.properties = properties
    }
}

/// One mapped property of a record type: an attribute, a to-one or a to-many.
public struct RecordProperty<Root: PersistentModel>: @unchecked Sendable {
    /// The model property's name.
    public let name: String
    let keyPath: AnyKeyPath
    let kind: PropertyKind
    let destination: (any PersistentModel.Type)?
    let read: (Root) -> AttributeValue
    let write: (Root, AttributeValue) -> Bool
    let readObjects: (Root) -> [AnyObject]
    let writeObjects: (Root, [AnyObject]) -> Void

    /// An attribute stored in the Swift property `keyPath`.
    public static func attribute<Value: AttributeConvertible>(
        _ name: String,
        _ keyPath: ReferenceWritableKeyPath<Root, Value>
    ) -> RecordProperty {
        RecordProperty(
            name: name,
            keyPath: keyPath,
            kind: .attribute,
            destination: nil,
            read: { $0[keyPath: keyPath].attributeValue },
            write: { object, value in
                guard let converted = Value(attributeValue: value) else { return false }
                object[keyPath: keyPath] = converted
                return true
            },
            readObjects: { _ in [] },
            writeObjects: { _, _ in }
        )
    }

    /// A to-one relationship held in the Swift property `keyPath`.
    public static func toOne<Destination: PersistentModel>(
        _ name: String,
        _ keyPath: ReferenceWritableKeyPath<Root, Destination?>
    ) -> RecordProperty {
        RecordProperty(
            name: name,
            keyPath: keyPath,
            kind: .toOne,
            destination: Destination.self,
            read: { _ in .null },
            write: { _, _ in true },
            readObjects: { object in object[keyPath: keyPath].map { [$0] } ?? [] },
            writeObjects: { object, values in object[keyPath: keyPath] = values.first as? Destination }
        )
    }

    /// A to-many relationship held in the Swift array `keyPath` (its order is kept for ordered relationships).
    public static func toMany<Destination: PersistentModel>(
        _ name: String,
        _ keyPath: ReferenceWritableKeyPath<Root, [Destination]>
    ) -> RecordProperty {
        RecordProperty(
            name: name,
            keyPath: keyPath,
            kind: .toMany,
            destination: Destination.self,
            read: { _ in .null },
            write: { _, _ in true },
            readObjects: { object in object[keyPath: keyPath] },
            writeObjects: { object, values in object[keyPath: keyPath] = values.compactMap { $0 as? Destination } }
        )
    }
}

/// What a mapped property is.
enum PropertyKind { case attribute, toOne, toMany }

/// A record schema with its root type erased, for code that handles records of any type.
/// A record type's schema without the type: immutable once built (closures over key paths), so shared.
struct ErasedSchema: @unchecked Sendable {
    let entity: String
    let keyPaths: [AnyKeyPath: String]
    let kinds: [String: PropertyKind]
    let destinations: [String: any PersistentModel.Type]
    let make: () -> AnyObject
    let readAttribute: [String: (AnyObject) -> AttributeValue]
    let writeAttribute: [String: (AnyObject, AttributeValue) -> Bool]
    let readObjects: [String: (AnyObject) -> [AnyObject]]
    let writeObjects: [String: (AnyObject, [AnyObject]) -> Void]

    init<Root>(_ schema: RecordSchema<Root>) {
        entity = schema.entity
        make = { Root() }
        var keyPaths: [AnyKeyPath: String] = [:]
        var kinds: [String: PropertyKind] = [:]
        var destinations: [String: any PersistentModel.Type] = [:]
        var readAttribute: [String: (AnyObject) -> AttributeValue] = [:]
        var writeAttribute: [String: (AnyObject, AttributeValue) -> Bool] = [:]
        var readObjects: [String: (AnyObject) -> [AnyObject]] = [:]
        var writeObjects: [String: (AnyObject, [AnyObject]) -> Void] = [:]
        for property in schema.properties {
            keyPaths[property.keyPath] = property.name
            kinds[property.name] = property.kind
            if let destination = property.destination { destinations[property.name] = destination }
            switch property.kind {
            case .attribute:
                readAttribute[property.name] = { object in (object as? Root).map(property.read) ?? .null }
                writeAttribute[property.name] = { object, value in
                    (object as? Root).map { property.write($0, value) } ?? false
                }
            case .toOne, .toMany:
                readObjects[property.name] = { object in (object as? Root).map(property.readObjects) ?? [] }
                writeObjects[property.name] = { object, values in
                    if let root = object as? Root { property.writeObjects(root, values) }
                }
            }
        }
        self.keyPaths = keyPaths
        self.kinds = kinds
        self.destinations = destinations
        self.readAttribute = readAttribute
        self.writeAttribute = writeAttribute
        self.readObjects = readObjects
        self.writeObjects = writeObjects
    }
}

/// The erased schema of any record object.
func erasedSchema(of object: AnyObject) -> ErasedSchema? {
    (type(of: object) as? any PersistentModel.Type)?.erasedSchema
}
