import CoexistLegacyStore
import CoexistModel

/// Fetches that include the context's unsaved changes (`includesPendingChanges`, Core Data's default): the
/// objects inserted, changed or deleted in the context and not saved yet take part as they are held.
extension ManagedObjectContext {
    /// The unsaved objects of a fetch: their rows, and the inserted ones by the temporary key their row has.
    struct PendingSelection {
        var rows: PendingRows
        var inserted: [Int64: ManagedObject]
    }

    /// Keys of inserted objects' rows: beyond any key a store holds, in insertion order (so that, among
    /// objects a sort puts in the same place, they follow the saved ones as they were inserted).
    static let temporaryKeyBase = Int64.max / 2

    /// What of the context's unsaved changes `request` must see: objects of its root table inserted,
    /// changed or deleted and not saved yet; nil when there are none or the request does not include them.
    ///
    /// Each inserted or changed object is matched by the request's own SQL with the attributes and to-ones
    /// it holds (a deleted one is left out); what its predicate reads through relationships (`ANY`,
    /// `@count`, a to-one's attributes) is read as saved.
    func pendingSelection<Result: ManagedObject>(
        _ request: FetchRequest<Result>
    ) throws(CoreDataError) -> PendingSelection? {
        guard request.includesPendingChanges, let table = schema.entities[request.entityName]?.table else {
            return nil
        }
        let inTable = { (object: ManagedObject) in self.schema.entities[object.entity]?.table == table }
        let inserted = insertedOrder.filter { !$0.isDeleted && inTable($0) }
        let updated = registered.values.filter { $0.isUpdated && inTable($0) }.sorted {
            ($0.objectID.pk ?? 0) < ($1.objectID.pk ?? 0)
        }
        let deleted = deletedObjects.filter(inTable)
        guard !inserted.isEmpty || !updated.isEmpty || !deleted.isEmpty else { return nil }
        var keys: [ObjectIdentifier: Int64] = [:]
        for (index, object) in insertedOrder.enumerated() {
            keys[ObjectIdentifier(object)] = Self.temporaryKeyBase + Int64(index)
        }
        func key(_ object: ManagedObject) -> ObjectID? {
            (object.objectID.pk ?? keys[ObjectIdentifier(object)]).map { ObjectID(entity: object.entity, pk: $0) }
        }
        var selection = PendingSelection(rows: PendingRows(rows: [], excluded: []), inserted: [:])
        for object in inserted + updated {
            if !object.isInserted { try fulfill(object) }
            guard let entity = model.entity(named: object.entity), let objectKey = key(object) else { continue }
            var attributes: [String: AttributeValue] = [:]
            for attribute in model.allAttributes(of: entity) where !attribute.isTransient {
                if case .attribute(let value)? = object.pending[attribute.name] {
                    attributes[attribute.name] = value
                } else {
                    attributes[attribute.name] =
                        object.isInserted
                        ? attribute.defaultValue?.value ?? .null : object.snapshot?.attribute(attribute.name) ?? .null
                }
            }
            var toOnes: [String: ObjectID?] = [:]
            for relationship in model.allRelationships(of: entity) where !relationship.isToMany {
                // A target deleted in the context is no target, as the object's value says.
                if case .toOne(let target)? = object.pending[relationship.name] {
                    toOnes[relationship.name] = target.flatMap { $0.isDeleted ? nil : key($0) }
                } else if !object.isInserted {
                    toOnes[relationship.name] = object.snapshot?.toOne[relationship.name].flatMap { id in
                        registered[id]?.isDeleted == true ? nil : id.pk.map { ObjectID(entity: id.entityName, pk: $0) }
                    }
                }
            }
            do {
                selection.rows.rows.append(
                    try store.pendingRow(
                        entity: object.entity,
                        pk: objectKey.pk,
                        version: object.snapshot?.version ?? 0,
                        attributes: attributes,
                        toOnes: toOnes
                    )
                )
            } catch {
                throw .store("\(error)")
            }
            if object.isInserted { selection.inserted[objectKey.pk] = object }
        }
        selection.rows.excluded = (updated + deleted).compactMap(\.objectID.pk)
        return selection
    }
}
