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
            writeObjects: { object, values in
                guard let root = object as? Root else { return }
                // Clearing needs no cast of the target (a cast to a generic type looks its metadata up).
                root[keyPath: keyPath] = values.isEmpty ? nil : values[0] as? Destination
            }
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

    /// Whether a property of this kind gives `value` back as it is (false when it does not fit, and for
    /// `.other`, whose conversion only `convert` knows).
    func keeps(_ value: AttributeValue) -> Bool {
        switch (self, value) {
        case (.string, .string), (.int64, .integer), (.boolean, .boolean), (.double, .double), (.date, .date):
            return true
        case (.int, .integer(let number)): return Int(exactly: number) != nil
        case (.uuid, .uuid(let bytes)): return bytes.count == 16
        default: return false
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
