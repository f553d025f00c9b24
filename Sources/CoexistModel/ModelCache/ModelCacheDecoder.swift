/// Reads the model a store carries in `Z_MODELCACHE.Z_CONTENT`: raw DEFLATE of an `NSKeyedArchiver`
/// binary plist of the `NSManagedObjectModel` (coredata-sqlite-format.md §2.3).
///
/// Entities list inherited properties again in the archive; a property counts as the entity's own when its
/// super-entity has no property of that name. Fetched properties and expression descriptions are not
/// stored, so they are left out; derived attributes are kept with ``Attribute/isDerived``.
public struct ModelCacheDecoder {
    /// A name for error messages, such as `Z_MODELCACHE of /path/Photos.sqlite`.
    public let source: String

    /// Creates a decoder whose errors name `source`.
    public init(source: String) { self.source = source }

    /// Inflates and decodes the cache's bytes.
    public func decode(compressed: [UInt8]) throws(ModelError) -> Model {
        let archived: [UInt8]
        do {
            archived = try RawInflate.inflate(compressed)
        } catch {
            switch error {
            case .corrupt(let reason): throw ModelError(file: source, message: "not raw DEFLATE data (\(reason))")
            case .tooLarge(let limit): throw ModelError(file: source, message: "inflates to more than \(limit) bytes")
            }
        }
        return try decode(archive: archived)
    }

    /// Decodes an already inflated keyed archive.
    public func decode(archive bytes: [UInt8]) throws(ModelError) -> Model {
        let archive: KeyedArchive
        do {
            archive = try KeyedArchive(try BinaryPropertyList.decode(bytes))
        } catch {
            throw ModelError(file: source, message: "cannot decode the model archive: \(error.message)")
        }
        let root = archive.resolve(archive.top["root"])
        guard archive.className(root) == "NSManagedObjectModel",
            let entityEntries = archive.dictionary(archive.field(root, "NSEntities"))
        else { throw ModelError(file: source, message: "the archive does not hold an NSManagedObjectModel") }

        var propertyNamesByEntity: [String: Set<String>] = [:]
        var entities: [Entity] = []
        let entityObjects = entityEntries.map { archive.resolve($0.value) }
        for object in entityObjects {
            guard let name = archive.string(archive.field(object, "NSEntityName")) else {
                throw ModelError(file: source, message: "an entity has no NSEntityName")
            }
            let properties = archive.dictionary(archive.field(object, "NSProperties")) ?? []
            propertyNamesByEntity[name] = Set(properties.map(\.key))
        }
        for object in entityObjects {
            entities.append(try decodeEntity(object, archive: archive, propertyNamesByEntity: propertyNamesByEntity))
        }
        let identifiers = (archive.array(archive.field(root, "NSVersionIdentifiers")) ?? []).compactMap {
            archive.string($0)
        }
        return try Model(entities: entities, versionIdentifiers: identifiers.sorted(), source: source)
            .validated(source: source)
    }

    private func decodeEntity(
        _ object: PropertyListValue,
        archive: KeyedArchive,
        propertyNamesByEntity: [String: Set<String>]
    ) throws(ModelError) -> Entity {
        let name = archive.string(archive.field(object, "NSEntityName")) ?? ""
        let parent = archive.string(archive.field(archive.field(object, "NSSuperentity"), "NSEntityName"))
        let inherited = parent.flatMap { propertyNamesByEntity[$0] } ?? []
        var entity = Entity(
            name: name,
            superentity: parent,
            isAbstract: archive.field(object, "NSIsAbstract").boolean ?? false,
            className: archive.string(archive.field(object, "NSClassNameForEntity")),
            renamingIdentifier: renamed(archive.string(archive.field(object, "NSRenamingIdentifier")), name)
        )
        let properties = (archive.dictionary(archive.field(object, "NSProperties")) ?? [])
            .filter { !inherited.contains($0.key) }
            .sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        for (propertyName, reference) in properties {
            let property = archive.resolve(reference)
            switch archive.className(property) {
            case "NSAttributeDescription", "NSDerivedAttributeDescription":
                entity.attributes.append(
                    try decodeAttribute(property, name: propertyName, entity: name, archive: archive)
                )
            case "NSRelationshipDescription":
                entity.relationships.append(decodeRelationship(property, name: propertyName, archive: archive))
            case "NSFetchedPropertyDescription", "NSExpressionDescription":
                continue
            case let other:
                throw ModelError(
                    file: source,
                    entity: name,
                    property: propertyName,
                    message: "unknown property class \(other ?? "(none)")"
                )
            }
        }
        for tuple in archive.array(archive.field(object, "NSUniqueTuples")) ?? [] {
            let names = (archive.array(tuple) ?? []).compactMap { element in
                archive.string(element) ?? archive.string(archive.field(element, "NSPropertyName"))
            }
            if !names.isEmpty { entity.uniquenessConstraints.append(names) }
        }
        for index in archive.array(archive.field(object, "NSFetchIndexDescriptions")) ?? [] {
            let elements = (archive.array(archive.field(index, "NSIndexElements")) ?? []).compactMap { element in
                archive.string(archive.field(element, "NSPropertyName")).map {
                    Index.Element(property: $0, ascending: archive.field(element, "NSAscending").boolean ?? true)
                }
            }
            entity.indexes.append(Index(name: archive.string(archive.field(index, "NSIndexName")), elements: elements))
        }
        return entity
    }

    private func decodeAttribute(
        _ object: PropertyListValue,
        name: String,
        entity: String,
        archive: KeyedArchive
    ) throws(ModelError) -> Attribute {
        let code = Int(archive.field(object, "NSAttributeType").integer ?? 0)
        guard let type = AttributeType(code: code) else {
            throw ModelError(file: source, entity: entity, property: name, message: "unknown NSAttributeType \(code)")
        }
        let flags = archive.field(object, "NSFlagsKey").integer ?? 0
        return Attribute(
            name: name,
            type: type,
            isOptional: archive.field(object, "NSIsOptional").boolean ?? false,
            isTransient: archive.field(object, "NSIsTransient").boolean ?? false,
            defaultValue: defaultValue(archive.field(object, "NSDefaultValue"), type: type, archive: archive),
            preservesValueInHistoryOnDeletion: flags & 16 != 0,
            allowsExternalBinaryDataStorage: flags & 4 != 0,
            valueTransformerName: archive.string(archive.field(object, "NSValueTransformerName")),
            isDerived: archive.className(object) == "NSDerivedAttributeDescription",
            isIndexed: archive.field(object, "NSIsIndexed").boolean ?? false,
            renamingIdentifier: renamed(archive.string(archive.field(object, "NSRenamingIdentifier")), name)
        )
    }

    private func defaultValue(_ value: PropertyListValue, type: AttributeType, archive: KeyedArchive) -> DefaultValue? {
        switch (type, value) {
        case (.integer16, .integer(let number)), (.integer32, .integer(let number)), (.integer64, .integer(let number)):
            return .integer(number)
        case (.boolean, _): return value.boolean.map { .boolean($0) }
        case (.double, .real(let number)), (.float, .real(let number)): return .real(number)
        case (.double, .integer(let number)), (.float, .integer(let number)): return .real(Double(number))
        case (.decimal, .integer(let number)): return .decimal(String(number))
        case (.decimal, .real(let number)): return .decimal(String(number))
        case (.string, .string(let text)), (.uri, .string(let text)): return .string(text)
        case (.date, .dictionary):
            if case .real(let seconds) = archive.field(value, "NS.time") { return .date(seconds) }
            return nil
        default: return archive.string(value).map { .string($0) }
        }
    }

    private func decodeRelationship(_ object: PropertyListValue, name: String, archive: KeyedArchive) -> Relationship {
        let destination =
            archive.string(archive.field(archive.field(object, "NSDestinationEntity"), "NSEntityName"))
            ?? archive.string(archive.field(object, "_NSDestinationEntityName")) ?? ""
        let inverse =
            archive.string(archive.field(archive.field(object, "NSInverseRelationship"), "NSPropertyName"))
            ?? archive.string(archive.field(object, "_NSInverseRelationshipName"))
        let maxCount = Int(archive.field(object, "NSMaxCount").integer ?? 0)
        let ruleCode = Int(archive.field(object, "NSDeleteRule").integer ?? 1)
        return Relationship(
            name: name,
            destination: destination,
            inverse: inverse,
            isToMany: maxCount != 1,
            isOrdered: archive.field(object, "NSIsOrdered").boolean ?? false,
            isOptional: archive.field(object, "NSIsOptional").boolean ?? false,
            isTransient: archive.field(object, "NSIsTransient").boolean ?? false,
            deleteRule: DeleteRule(rawValue: ruleCode) ?? .nullify,
            minCount: Int(archive.field(object, "NSMinCount").integer ?? 0),
            maxCount: maxCount,
            renamingIdentifier: renamed(archive.string(archive.field(object, "NSRenamingIdentifier")), name)
        )
    }

    /// Archives repeat the name as the renaming identifier when nothing was renamed: keep only real renames.
    private func renamed(_ identifier: String?, _ name: String) -> String? {
        guard let identifier, !identifier.isEmpty, identifier != name else { return nil }
        return identifier
    }
}
