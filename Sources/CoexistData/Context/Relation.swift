/// A relationship of a ``BackedModel`` record kept in the record's ``BackingData``, as SwiftData's models keep
/// theirs: declare it without a value (a to-one optional, a to-many an array) and map it in the schema like
/// any relationship (`.toOne("category", \.category)`).
///
/// ```swift
/// final class Task: BackedModel {
///     let persistentBackingData = BackingData()
///     @Field var title = ""
///     @Relation var category: Category?
///     static let schema = RecordSchema<Task>(entity: "Task", [
///         .attribute("title", \.title), .toOne("category", \.category),
///     ])
///     required init() {}
/// }
/// ```
///
/// A record a fetch makes starts with no target in a relation unless its initializer set one: the context
/// sees that in the backing data, without reading each relationship through its key path (a plain stored
/// relationship is read once per record a fetch makes, to clear what the initializer may have set). The
/// context also reads relations from the backing data directly when it compares a record with its snapshot.
/// A relation the schema does not map keeps its value in the property itself.
@propertyWrapper
public struct Relation<Value: RelationValue> {
    /// The value of a relation the schema does not map (it has no slot in the backing data).
    @usableFromInline var unmapped: Value?

    /// A relation with no target.
    public init() {}

    /// A relation is reached through its record only (a ``BackedModel`` class).
    @available(*, unavailable, message: "@Relation is for properties of a BackedModel class")
    public var wrappedValue: Value {
        get { Value.noTargets }
        set { _ = newValue }
    }

    /// The relation's targets in `record`. Inlinable, as ``Field``'s accessor is: specialized where the record
    /// type is declared.
    @inlinable
    public static subscript<Root: BackedModel>(
        _enclosingInstance record: Root,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Root, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Root, Self>
    ) -> Value {
        get {
            let backing = record.persistentBackingData
            guard let slot = backing.relationSlot(of: wrappedKeyPath, in: record) else {
                return record[keyPath: storageKeyPath].unmapped ?? Value.noTargets
            }
            return Value(targets: backing.targets(slot))
        }
        set {
            let backing = record.persistentBackingData
            guard let slot = backing.relationSlot(of: wrappedKeyPath, in: record) else {
                record[keyPath: storageKeyPath].unmapped = newValue
                return
            }
            backing.setTargets(newValue.targets, slot)
        }
    }
}

/// The Swift type of a ``Relation``: an optional record (a to-one) or an array of records (a to-many).
public protocol RelationValue {
    /// The value with no target (nil, or an empty array).
    static var noTargets: Self { get }
    /// The value holding `targets` (those of the record type only, in their order).
    init(targets: [AnyObject])
    /// The value's targets, in order.
    var targets: [AnyObject] { get }
}

extension Optional: RelationValue where Wrapped: PersistentModel {
    public static var noTargets: Self { nil }
    public init(targets: [AnyObject]) { self = targets.isEmpty ? nil : targets[0] as? Wrapped }
    public var targets: [AnyObject] { map { [$0] } ?? [] }
}

extension Array: RelationValue where Element: PersistentModel {
    public static var noTargets: Self { [] }
    public init(targets: [AnyObject]) { self = targets.compactMap { $0 as? Element } }
    public var targets: [AnyObject] { map { $0 } }
}
