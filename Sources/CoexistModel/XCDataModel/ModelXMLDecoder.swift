/// Turns the XML tree of a `.xcdatamodel/contents` file into a ``Model``.
struct ModelXMLDecoder {
    let file: String

    func decode(_ root: XMLNode) throws(ModelError) -> Model {
        guard root.name == "model" else {
            throw ModelError(
                file: file,
                line: root.line,
                message: "expected a <model> document element, found <\(root.name)>"
            )
        }
        var entities: [Entity] = []
        var seen: Set<String> = []
        for node in root.children(named: "entity") {
            let entity = try decodeEntity(node)
            guard seen.insert(entity.name).inserted else {
                throw ModelError(file: file, line: node.line, entity: entity.name, message: "entity is declared twice")
            }
            entities.append(entity)
        }
        let identifier = root.attributes["userDefinedModelVersionIdentifier"] ?? ""
        return try Model(entities: entities, versionIdentifiers: [identifier], source: file).validated(source: file)
    }

    private func decodeEntity(_ node: XMLNode) throws(ModelError) -> Entity {
        guard let name = node.attributes["name"], !name.isEmpty else {
            throw ModelError(file: file, line: node.line, message: "<entity> without a name")
        }
        var entity = Entity(
            name: name,
            superentity: node.attributes["parentEntity"],
            isAbstract: node.attributes["isAbstract"] == "YES",
            className: node.attributes["representedClassName"],
            renamingIdentifier: node.attributes["elementID"]
        )
        for child in node.children {
            switch child.name {
            case "attribute": entity.attributes.append(try decodeAttribute(child, entity: name))
            case "relationship": entity.relationships.append(try decodeRelationship(child, entity: name))
            case "uniquenessConstraints":
                for constraint in child.children(named: "uniquenessConstraint") {
                    entity.uniquenessConstraints.append(
                        constraint.children(named: "constraint").compactMap { $0.attributes["value"] }
                    )
                }
            case "compoundIndexes":
                for index in child.children(named: "compoundIndex") {
                    let elements = index.children(named: "index").compactMap { $0.attributes["value"] }
                    entity.indexes.append(Index(elements: elements.map { Index.Element(property: $0) }))
                }
            case "fetchIndex":
                let elements = child.children(named: "fetchIndexElement").compactMap { element -> Index.Element? in
                    guard let property = element.attributes["property"] else { return nil }
                    return Index.Element(property: property, ascending: element.attributes["order"] != "descending")
                }
                entity.indexes.append(Index(name: child.attributes["name"], elements: elements))
            default: continue  // fetchedProperty, userInfo, elements (editor layout), configuration
            }
        }
        return entity
    }

    private func decodeAttribute(_ node: XMLNode, entity: String) throws(ModelError) -> Attribute {
        guard let name = node.attributes["name"], !name.isEmpty else {
            throw ModelError(file: file, line: node.line, entity: entity, message: "<attribute> without a name")
        }
        let typeName = node.attributes["attributeType"] ?? "Undefined"
        guard let type = AttributeType(xmlName: typeName) else {
            throw ModelError(
                file: file,
                line: node.line,
                entity: entity,
                property: name,
                message: "unknown attributeType \"\(typeName)\""
            )
        }
        var attribute = Attribute(
            name: name,
            type: type,
            isOptional: node.attributes["optional"] == "YES",
            isTransient: node.attributes["transient"] == "YES",
            preservesValueInHistoryOnDeletion: node.attributes["preserveAfterDeletion"] == "YES",
            allowsExternalBinaryDataStorage: node.attributes["allowsExternalBinaryDataStorage"] == "YES",
            valueTransformerName: node.attributes["valueTransformerName"],
            isDerived: node.attributes["derived"] == "YES",
            isIndexed: node.attributes["indexed"] == "YES",
            renamingIdentifier: node.attributes["elementID"]
        )
        if let interval = node.attributes["defaultDateTimeInterval"], let seconds = Double(interval) {
            attribute.defaultValue = .date(seconds)
        } else if let text = node.attributes["defaultValueString"] {
            attribute.defaultValue = try defaultValue(
                text,
                type: type,
                entity: entity,
                attribute: name,
                line: node.line
            )
        }
        return attribute
    }

    private func defaultValue(
        _ text: String,
        type: AttributeType,
        entity: String,
        attribute: String,
        line: Int
    ) throws(ModelError) -> DefaultValue? {
        func invalid() -> ModelError {
            ModelError(
                file: file,
                line: line,
                entity: entity,
                property: attribute,
                message: "defaultValueString \"\(text)\" is not a valid \(type.xmlName)"
            )
        }
        switch type {
        case .integer16, .integer32, .integer64:
            guard let value = Int64(text) else { throw invalid() }
            return .integer(value)
        case .double, .float:
            guard let value = Double(text) else { throw invalid() }
            return .real(value)
        case .decimal:
            guard Double(text) != nil else { throw invalid() }
            return .decimal(text)
        case .boolean:
            switch text {
            case "YES", "1", "true": return .boolean(true)
            case "NO", "0", "false": return .boolean(false)
            default: throw invalid()
            }
        case .string, .uri: return .string(text)
        default: return nil
        }
    }

    private func decodeRelationship(_ node: XMLNode, entity: String) throws(ModelError) -> Relationship {
        guard let name = node.attributes["name"], !name.isEmpty else {
            throw ModelError(file: file, line: node.line, entity: entity, message: "<relationship> without a name")
        }
        guard let destination = node.attributes["destinationEntity"] else {
            throw ModelError(
                file: file,
                line: node.line,
                entity: entity,
                property: name,
                message: "no destinationEntity"
            )
        }
        let ruleName = node.attributes["deletionRule"] ?? "Nullify"
        guard let rule = DeleteRule(xmlName: ruleName) else {
            throw ModelError(
                file: file,
                line: node.line,
                entity: entity,
                property: name,
                message: "unknown deletionRule \"\(ruleName)\""
            )
        }
        let isToMany = node.attributes["toMany"] == "YES"
        let maxCount = node.attributes["maxCount"].flatMap { Int($0) } ?? (isToMany ? 0 : 1)
        return Relationship(
            name: name,
            destination: destination,
            inverse: node.attributes["inverseName"],
            isToMany: isToMany,
            isOrdered: node.attributes["ordered"] == "YES",
            isOptional: node.attributes["optional"] == "YES",
            isTransient: node.attributes["transient"] == "YES",
            deleteRule: rule,
            minCount: node.attributes["minCount"].flatMap { Int($0) } ?? 0,
            maxCount: maxCount,
            renamingIdentifier: node.attributes["elementID"]
        )
    }
}
