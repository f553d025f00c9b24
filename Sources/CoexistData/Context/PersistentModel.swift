public import CoexistModel
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
///
/// A fetch sets each plain stored property through its key path, one runtime call per attribute of every
/// record; a ``BackedModel``'s ``Field`` attributes are filled at once instead (a fetch is about three times
/// as fast: `coexist-bench adapter-fetch`).
///
/// A context makes the records it fetches with ``init(backingData:)``, which calls `init()` unless the type
/// has its own: a type whose `init()` computes a costly default (on Linux, `UUID()` opens and reads the
/// kernel's random device) can skip it there, since every mapped property is set right after (a field's
/// initial value is never computed for a fetched record):
///
/// ```swift
/// final class Task: PersistentModel {
///     var id: UUID
///     required init() { id = UUID() }
///     required init(backingData: BackingData) { id = backingData.placeholderUUID }
///     …
/// }
/// ```
public protocol PersistentModel: AnyObject, Hashable {
    /// The entity and the property mapping.
    static var schema: RecordSchema<Self> { get }
    /// A new record, for an app to insert.
    init()
    /// A record a context is about to fill from a stored row (SwiftData's `init(backingData:)`): every
    /// property the schema maps is set right after, so nothing costly needs computing here.
    init(backingData: BackingData)
}

extension PersistentModel {
    /// Calls `init()`.
    public init(backingData: BackingData) { self.init() }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    /// The schema without its root type, for code that handles records of any type: built once per type
    /// (from ``schema``, read then) and kept.
    static var erasedSchema: ErasedSchema {
        let key = ObjectIdentifier(Self.self)
        if let known = ErasedSchemaCache.shared.schema(key) { return known }
        let built = ErasedSchema(schema)
        built.findFields()
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
///
/// The factories are inlinable so that their accessors are specialized for the record type where the
/// schema is declared: a fetch calls them for every property of every record.
public struct RecordProperty<Root: PersistentModel>: @unchecked Sendable {
    /// The model property's name.
    public let name: String
    @usableFromInline let keyPath: AnyKeyPath
    @usableFromInline let kind: PropertyKind
    @usableFromInline let destination: (any PersistentModel.Type)?
    /// The attribute's value as the record holds it (`.null` for a relationship).
    @usableFromInline let read: (AnyObject) -> AttributeValue
    /// Stores an attribute value in the record: the value as the record now holds it, or nil when it does
    /// not fit the Swift property (the record is unchanged then).
    @usableFromInline let write: (AnyObject, AttributeValue) -> AttributeValue?
    /// An attribute value as the Swift property would give it back, or nil when it does not fit.
    @usableFromInline let convert: (AttributeValue) -> AttributeValue?
    /// The same for the common property types, without a call through `convert`.
    @usableFromInline let conversion: AttributeConversion
    @usableFromInline let readObjects: (AnyObject) -> [AnyObject]
    @usableFromInline let writeObjects: (AnyObject, [AnyObject]) -> Void

    @usableFromInline
    init(
        name: String,
        keyPath: AnyKeyPath,
        kind: PropertyKind,
        destination: (any PersistentModel.Type)?,
        read: @escaping (AnyObject) -> AttributeValue,
        write: @escaping (AnyObject, AttributeValue) -> AttributeValue?,
        convert: @escaping (AttributeValue) -> AttributeValue? = { _ in nil },
        conversion: AttributeConversion = .other,
        readObjects: @escaping (AnyObject) -> [AnyObject],
        writeObjects: @escaping (AnyObject, [AnyObject]) -> Void
    ) {
        self.name = name
        self.keyPath = keyPath
        self.kind = kind
        self.destination = destination
        self.read = read
        self.write = write
        self.convert = convert
        self.conversion = conversion
        self.readObjects = readObjects
        self.writeObjects = writeObjects
    }

    /// An attribute stored in the Swift property `keyPath`.
    @inlinable
    public static func attribute<Value: AttributeConvertible>(
        _ name: String,
        _ keyPath: ReferenceWritableKeyPath<Root, Value>
    ) -> RecordProperty {
        RecordProperty(
            name: name,
            keyPath: keyPath,
            kind: .attribute,
            destination: nil,
            read: { object in (object as? Root)?[keyPath: keyPath].attributeValue ?? .null },
            write: { object, value in
                guard let root = object as? Root, let converted = Value(attributeValue: value) else { return nil }
                root[keyPath: keyPath] = converted
                return converted.attributeValue
            },
            convert: { value in Value(attributeValue: value)?.attributeValue },
            conversion: AttributeConversion(Value.self),
            readObjects: { _ in [] },
            writeObjects: { _, _ in }
        )
    }

    /// A to-one relationship held in the Swift property `keyPath`.
    @inlinable
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
            write: { _, _ in nil },
            readObjects: { object in ((object as? Root)?[keyPath: keyPath]).map { [$0] } ?? [] },
            writeObjects: { object, values in (object as? Root)?[keyPath: keyPath] = values.first as? Destination }
        )
    }

    /// A to-many relationship held in the Swift array `keyPath` (its order is kept for ordered relationships).
    @inlinable
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
            write: { _, _ in nil },
            readObjects: { object in (object as? Root)?[keyPath: keyPath] ?? [] },
            writeObjects: { object, values in
                (object as? Root)?[keyPath: keyPath] = values.compactMap { $0 as? Destination }
            }
        )
    }
}

/// How an attribute value converts to a property of one of the common Swift types and back: what
/// `Value(attributeValue:)?.attributeValue` gives, found without calling it (a fetch does it for every
/// attribute of every record).
@usableFromInline
enum AttributeConversion: Sendable {
    case string, int, int64, boolean, double, date, uuid
    /// Any other type: only its own conversion knows.
    case other

    @usableFromInline
    init<Value: AttributeConvertible>(_: Value.Type) {
        self =
            switch Value.self {
            case is String.Type: .string
            case is Int.Type: .int
            case is Int64.Type: .int64
            case is Bool.Type: .boolean
            case is Double.Type: .double
            case is Date.Type: .date
            case is UUID.Type: .uuid
            default: .other
            }
    }

    /// `value` as a property of this kind gives it back (nil when it does not fit), or `convert`'s answer
    /// for `.other`.
    func apply(_ value: AttributeValue, _ convert: (AttributeValue) -> AttributeValue?) -> AttributeValue? {
        switch (self, value) {
        case (.string, .string), (.int64, .integer), (.boolean, .boolean), (.double, .double), (.date, .date):
            return value
        case (.string, .uri(let text)), (.string, .decimal(let text)): return .string(text)
        case (.int, .integer(let number)): return Int(exactly: number) == nil ? nil : value
        case (.uuid, .uuid(let bytes)): return bytes.count == 16 ? value : nil
        case (.other, _): return convert(value)
        default: return nil
        }
    }
}

/// What a mapped property is.
@usableFromInline
enum PropertyKind { case attribute, toOne, toMany }

/// A record type's schema without the type, for code that handles records of any type: immutable once
/// built (closures over key paths), so shared (a class: records and registrations hold it without copying
/// it). Attributes and relationships each have a slot, their position here; a registration's snapshot holds
/// values by slot.
final class ErasedSchema: @unchecked Sendable {
    struct AttributeSlot {
        let name: String
        let read: (AnyObject) -> AttributeValue
        let write: (AnyObject, AttributeValue) -> AttributeValue?
        let convert: (AttributeValue) -> AttributeValue?
        let conversion: AttributeConversion
    }

    struct RelationshipSlot {
        let name: String
        let kind: PropertyKind
        let destination: (any PersistentModel.Type)?
        let read: (AnyObject) -> [AnyObject]
        let write: (AnyObject, [AnyObject]) -> Void
    }

    let entity: String
    /// The record type it was made from.
    let type: ObjectIdentifier
    let keyPaths: [AnyKeyPath: String]
    /// Attribute slots by the key path of their Swift property.
    let attributeSlotsByKeyPath: [AnyKeyPath: Int]
    let make: () -> AnyObject
    /// The backing data of a record of a ``BackedModel`` type (nil for other types).
    let backing: ((AnyObject) -> BackingData?)?
    /// By attribute slot: whether it is a ``Field`` (kept in the backing data), found by ``findFields()``
    /// before the schema is shared (all false for a type that is not a ``BackedModel``).
    private(set) var isField: [Bool]
    /// The attribute slots of fields by the identity of the key path their accessor passed at the probe (found
    /// by ``findFields()``), with that key path: held, so that no other object can have its identity.
    private var fieldSlotsByIdentity: [ObjectIdentifier: (keyPath: AnyKeyPath, slot: Int)] = [:]
    /// Which attribute slots of a record type are fields, and the key paths their accessors passed.
    private let probe: ((ErasedSchema) -> (fields: [Bool], keyPaths: [Int: AnyKeyPath]))?
    let attributes: [AttributeSlot]
    let relationships: [RelationshipSlot]
    /// Slots by property name.
    let attributeSlots: [String: Int]
    let relationshipSlots: [String: Int]

    init<Root>(_ schema: RecordSchema<Root>) {
        entity = schema.entity
        type = ObjectIdentifier(Root.self)
        make = { Root(backingData: BackingData()) }
        if let backed = Root.self as? any BackedModel.Type {
            backing = Self.backingReader(backed)
            probe = Self.fieldProbe(backed)
        } else {
            backing = nil
            probe = nil
        }
        var keyPaths: [AnyKeyPath: String] = [:]
        var slotsByKeyPath: [AnyKeyPath: Int] = [:]
        var attributes: [AttributeSlot] = []
        var relationships: [RelationshipSlot] = []
        for property in schema.properties {
            keyPaths[property.keyPath] = property.name
            switch property.kind {
            case .attribute:
                slotsByKeyPath[property.keyPath] = slotsByKeyPath[property.keyPath] ?? attributes.count
                attributes.append(
                    AttributeSlot(
                        name: property.name,
                        read: property.read,
                        write: property.write,
                        convert: property.convert,
                        conversion: property.conversion
                    )
                )
            case .toOne, .toMany:
                relationships.append(
                    RelationshipSlot(
                        name: property.name,
                        kind: property.kind,
                        destination: property.destination,
                        read: property.readObjects,
                        write: property.writeObjects
                    )
                )
            }
        }
        self.keyPaths = keyPaths
        attributeSlotsByKeyPath = slotsByKeyPath
        isField = Array(repeating: false, count: attributes.count)
        self.attributes = attributes
        self.relationships = relationships
        attributeSlots = Dictionary(attributes.enumerated().map { ($1.name, $0) }) { first, _ in first }
        relationshipSlots = Dictionary(relationships.enumerated().map { ($1.name, $0) }) { first, _ in first }
    }

    /// Finds which attributes are ``Field``s (a ``BackedModel`` type's): once, before the schema is shared.
    func findFields() {
        guard let probe else { return }
        let found = probe(self)
        isField = found.fields
        for (slot, keyPath) in found.keyPaths { fieldSlotsByIdentity[ObjectIdentifier(keyPath)] = (keyPath, slot) }
    }

    /// The slot of the field whose accessor passes `keyPath`, when it is the object the probe saw; nil
    /// otherwise (the caller looks it up by its components).
    func fieldSlot(byIdentityOf keyPath: AnyKeyPath) -> Int? {
        guard let known = fieldSlotsByIdentity[ObjectIdentifier(keyPath)], known.keyPath === keyPath else { return nil }
        return known.slot
    }

    private static func backingReader<Root: BackedModel>(_: Root.Type) -> (AnyObject) -> BackingData? {
        { ($0 as? Root)?.persistentBackingData }
    }

    /// The schema being probed, while the probe's record is made (its initializer may use fields).
    @TaskLocal static var probing: ErasedSchema?

    /// Reads each attribute of a record made for the purpose, its backing data noting the field each read
    /// reaches: an attribute is a field when its own slot is reached.
    private static func fieldProbe<Root: BackedModel>(
        _: Root.Type
    ) -> (ErasedSchema) -> (fields: [Bool], keyPaths: [Int: AnyKeyPath]) {
        { schema in
            let record = $probing.withValue(schema) { Root(backingData: BackingData()) }
            let backing = record.persistentBackingData
            backing.probe(schema)
            defer { backing.reset() }
            var keyPaths: [Int: AnyKeyPath] = [:]
            let fields = schema.attributes.indices.map { slot in
                backing.reached = nil
                backing.reachedKeyPath = nil
                _ = schema.attributes[slot].read(record)
                guard backing.reached == slot else { return false }
                keyPaths[slot] = backing.reachedKeyPath
                return true
            }
            return (fields, keyPaths)
        }
    }

    /// The kind of the property `name` (nil when the record type does not map it).
    func kind(of name: String) -> PropertyKind? {
        if attributeSlots[name] != nil { return .attribute }
        return relationshipSlots[name].map { relationships[$0].kind }
    }

    /// The attribute slot named `name`.
    func attribute(_ name: String) -> AttributeSlot? { attributeSlots[name].map { attributes[$0] } }

    /// The relationship slot named `name`.
    func relationship(_ name: String) -> RelationshipSlot? { relationshipSlots[name].map { relationships[$0] } }

    /// Every attribute of `object`, by slot.
    func readAttributes(_ object: AnyObject) -> [AttributeValue] { attributes.map { $0.read(object) } }

    /// Attribute values by slot, by name.
    func named(_ values: [AttributeValue]) -> [String: AttributeValue] {
        var named: [String: AttributeValue] = [:]
        named.reserveCapacity(values.count)
        for (slot, value) in zip(attributes, values) { named[slot.name] = value }
        return named
    }
}

/// The erased schema of any record object.
func erasedSchema(of object: AnyObject) -> ErasedSchema? {
    (type(of: object) as? any PersistentModel.Type)?.erasedSchema
}
