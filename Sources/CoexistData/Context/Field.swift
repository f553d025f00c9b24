public import CoexistModel
public import FoundationEssentials

/// A record whose attributes are ``Field`` properties: they keep their values in the record's
/// ``persistentBackingData``, which a context fills with a stored row at once, as SwiftData's `@Model`
/// properties live in their model's backing data. A fetch then makes a record without a Swift key path
/// write per attribute (the cost of plain stored properties).
///
/// ```swift
/// final class Task: BackedModel {
///     let persistentBackingData = BackingData()
///     @Field var id = UUID()
///     @Field var title = ""
///     @Relation var category: Category?
///     static let schema = RecordSchema<Task>(entity: "Task", [
///         .attribute("id", \.id), .attribute("title", \.title), .toOne("category", \.category),
///     ])
///     required init() {}
/// }
/// ```
///
/// A field's initial value is computed the first time the record's fields are used, not when it is made:
/// a fetched record never computes one (`UUID()` above is not called for it), unless its initializer uses a
/// field. The first use of a type computes them once, for a record made to find which attributes are fields.
/// Attributes held in plain stored properties work in a backed record too; its relationships are ``Relation``s
/// (kept in the backing data too) or plain stored properties. Map each field once.
///
/// A field reads back what its value gives as an attribute value, converted again (what a save and a fetch
/// would give): a value whose conversion is not exact (a relative `URL` comes back absolute) reads back
/// converted, and one that does not convert back reads as the field's initial value.
public protocol BackedModel: PersistentModel {
    /// Where the record's fields keep their values: a `let` of its own, initialized with `BackingData()`
    /// (or with the one ``PersistentModel/init(backingData:)`` is given); never shared with another record.
    var persistentBackingData: BackingData { get }
}

/// An attribute of a ``BackedModel`` record kept in the record's ``BackingData``: declare it with its
/// initial value, and map it in the schema like any attribute (`.attribute("title", \.title)`).
@propertyWrapper
public struct Field<Value: AttributeConvertible> {
    @usableFromInline let initial: () -> Value
    /// The value of a field the schema does not map (it has no slot in the backing data).
    @usableFromInline var unmapped: Value?

    /// A field whose initial value is `wrappedValue`, computed when first needed.
    public init(wrappedValue: @autoclosure @escaping () -> Value) {
        initial = wrappedValue
    }

    /// A field is reached through its record only (a ``BackedModel`` class).
    @available(*, unavailable, message: "@Field is for properties of a BackedModel class")
    public var wrappedValue: Value {
        get { initial() }
        set { _ = newValue }
    }

    /// The field's value in `record`. Inlinable: an optimized build specializes it in the record's module
    /// for its types (a `String` field's read: 417 instructions, against 1,090 through the generic accessor
    /// with the backing data's exclusivity checks).
    @inlinable
    public static subscript<Root: BackedModel>(
        _enclosingInstance record: Root,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Root, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Root, Self>
    ) -> Value {
        get {
            let backing = record.persistentBackingData
            guard let slot = backing.slot(of: wrappedKeyPath, in: record) else {
                if let value = record[keyPath: storageKeyPath].unmapped { return value }
                let value = record[keyPath: storageKeyPath].initial()
                record[keyPath: storageKeyPath].unmapped = value
                return value
            }
            if backing.state != .filled { return record[keyPath: storageKeyPath].initial() }
            // Values in a filled backing are kept as the property's type gives them back: they convert.
            return Value(attributeValue: backing.values[slot]) ?? record[keyPath: storageKeyPath].initial()
        }
        set {
            let backing = record.persistentBackingData
            guard let slot = backing.slot(of: wrappedKeyPath, in: record) else {
                record[keyPath: storageKeyPath].unmapped = newValue
                return
            }
            if backing.state == .filled { backing.values[slot] = newValue.attributeValue }
        }
    }
}

/// The storage of a ``BackedModel`` record's fields and relations: their values by attribute slot, and the
/// targets of its relations by relationship slot. A context passes a new
/// one to ``PersistentModel/init(backingData:)``; a record keeps its own in
/// ``BackedModel/persistentBackingData`` (that one, or one it made: the context fills the record's).
public final class BackingData {
    @usableFromInline
    enum State {
        /// No value yet: the fields' initial values are computed at the first use of one.
        case empty
        /// The fields' initial values are being read (each field gives its own).
        case initializing
        /// Which of a schema's attributes are fields and which relationships are relations is being found
        /// (``ErasedSchema/findFieldsAndRelations()``).
        case probing
        /// Every field's value is held.
        case filled
    }

    /// A value for a UUID property the context is about to set (all zero).
    public let placeholderUUID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    // Unchecked for exclusive access: no access to these starts while another to the same property is under
    // way on the same thread (writes are plain assignments, their values computed first). The dynamic checks
    // were a third of a field read (a `title` read: 660 instructions with them, 417 without).
    @exclusivity(unchecked) @usableFromInline var state = State.empty
    /// The record type's erased schema, once known.
    @exclusivity(unchecked) var schema: ErasedSchema?
    /// By attribute slot (those of plain stored properties are not used).
    @exclusivity(unchecked) @usableFromInline var values: [AttributeValue] = []
    /// By relationship slot, the targets of the relations set since the backing data was made: none for a
    /// record made for a row whose initializer set no relation (the context then reads none).
    @exclusivity(unchecked) var relations: [[AnyObject]] = []
    /// While probing: the slot of the last field reached and of the last relation reached, each with the
    /// identity of the key path it was reached by.
    var reached: Int?
    var reachedKeyPath: AnyKeyPath?
    var reachedRelation: Int?
    var reachedRelationKeyPath: AnyKeyPath?

    /// Empty storage: the fields' initial values are computed when one is first used.
    public init() {}

    /// The attribute slot of the field `keyPath` of `record` (nil when the schema does not map it), the
    /// fields' initial values computed first when none is held yet.
    @usableFromInline
    func slot<Root: BackedModel>(of keyPath: AnyKeyPath, in record: Root) -> Int? {
        let schema = schema(of: record)
        // The key path a field's accessor passes is most often one object for the program's life (the runtime
        // keeps a key path literal's): found by its identity first, without hashing its components. The schema
        // holds the object it found at the probe, so no other can take its address.
        guard let slot = schema.fieldSlot(byIdentityOf: keyPath) ?? schema.attributeSlotsByKeyPath[keyPath] else {
            return nil
        }
        switch state {
        case .empty: initialize(record, schema)
        case .probing:
            reached = slot
            reachedKeyPath = keyPath
        case .initializing, .filled: break
        }
        return slot
    }

    /// The relationship slot of the relation `keyPath` of `record` (nil when the schema does not map it).
    @usableFromInline
    func relationSlot<Root: BackedModel>(of keyPath: AnyKeyPath, in record: Root) -> Int? {
        let schema = schema(of: record)
        guard let slot = schema.relationSlot(byIdentityOf: keyPath) ?? schema.relationshipSlotsByKeyPath[keyPath]
        else {
            return nil
        }
        if state == .probing {
            reachedRelation = slot
            reachedRelationKeyPath = keyPath
        }
        return slot
    }

    /// The erased schema of `record`'s type: the one held, or the one being probed, or the type's.
    private func schema<Root: BackedModel>(of record: Root) -> ErasedSchema {
        if let known = schema { return known }
        if let probing = ErasedSchema.probing, probing.type == ObjectIdentifier(Root.self) {
            // The record the probe makes, used by its own initializer: the schema is not kept yet (asking for it
            // would build it again, and probe again).
            schema = probing
            state = .probing
            return probing
        }
        let schema = Root.erasedSchema
        self.schema = schema
        return schema
    }

    /// The targets of relation `slot`, in order (none until one is set).
    @usableFromInline
    func targets(_ slot: Int) -> [AnyObject] { slot < relations.count ? relations[slot] : [] }

    /// Holds `objects` as the targets of relation `slot` (a slot of the schema ``relationSlot(of:in:)`` found).
    @usableFromInline
    func setTargets(_ objects: [AnyObject], _ slot: Int) {
        if slot >= relations.count {
            guard !objects.isEmpty else { return }
            relations += Array(repeating: [], count: slot + 1 - relations.count)
        }
        relations[slot] = objects
    }

    /// Holds the initial value of every field of `record`: read through the fields while ``state`` is
    /// `.initializing` (each computes its own then).
    private func initialize(_ record: AnyObject, _ schema: ErasedSchema) {
        state = .initializing
        values = schema.attributes.indices.map { schema.isField[$0] ? schema.attributes[$0].read(record) : .null }
        state = .filled
    }

    /// Holds `values` (by slot, as the properties give them back) as the stored row's, but for the fields
    /// at `unfetched` slots: those keep what the record's initializer set, or hold their initial values.
    /// `values` gets them too.
    func fill(_ values: inout [AttributeValue], unfetched: [Int], of record: AnyObject, _ schema: ErasedSchema) {
        let held = state == .filled && self.values.count == values.count ? self.values : nil
        self.schema = schema
        if !unfetched.isEmpty {
            state = .initializing
            for slot in unfetched where schema.isField[slot] {
                values[slot] = held?[slot] ?? schema.attributes[slot].read(record)
            }
        }
        self.values = values
        state = .filled
    }

    /// Starts finding which attributes of `schema` are fields.
    func probe(_ schema: ErasedSchema) {
        self.schema = schema
        state = .probing
    }

    /// Back to holding nothing.
    func reset() {
        schema = nil
        values = []
        relations = []
        reached = nil
        reachedKeyPath = nil
        reachedRelation = nil
        reachedRelationKeyPath = nil
        state = .empty
    }
}
