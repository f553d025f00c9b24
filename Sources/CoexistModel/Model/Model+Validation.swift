extension Model {
    /// Checks the model's internal consistency and returns it with `source` set.
    ///
    /// Throws ``ModelError`` naming `source`, the entity and the property for: a name that is not a plain
    /// identifier, a duplicate property (including one that repeats an inherited name), a missing
    /// super-entity, an inheritance cycle, a missing destination, or an inverse that does not exist.
    public func validated(source: String) throws(ModelError) -> Model {
        var model = self
        model.source = source
        func fail(_ entity: String?, _ property: String?, _ message: String) -> ModelError {
            ModelError(file: source, entity: entity, property: property, message: message)
        }
        for entity in entities {
            guard Self.isPlainName(entity.name) else {
                throw fail(entity.name, nil, "entity name is not a plain identifier")
            }
            if let parent = entity.superentity {
                guard self.entity(named: parent) != nil else {
                    throw fail(entity.name, nil, "super-entity \(parent) does not exist")
                }
                guard ancestry(of: entity).last?.superentity == nil else {
                    throw fail(entity.name, nil, "inheritance cycle through \(parent)")
                }
            }
            var seen: Set<String> = []
            for ancestor in ancestry(of: entity).dropFirst() {
                for name in ancestor.attributes.map(\.name) + ancestor.relationships.map(\.name) {
                    seen.insert(name)
                }
            }
            for name in entity.attributes.map(\.name) + entity.relationships.map(\.name) {
                guard Self.isPlainName(name) else { throw fail(entity.name, name, "name is not a plain identifier") }
                guard seen.insert(name).inserted else {
                    throw fail(entity.name, name, "property is declared twice (or repeats an inherited one)")
                }
            }
            for relationship in entity.relationships {
                guard self.entity(named: relationship.destination) != nil else {
                    throw fail(
                        entity.name,
                        relationship.name,
                        "destination entity \(relationship.destination) does not exist"
                    )
                }
                if let inverseName = relationship.inverse, inverse(of: relationship) == nil {
                    throw fail(
                        entity.name,
                        relationship.name,
                        "inverse \(relationship.destination).\(inverseName) does not exist"
                    )
                }
            }
        }
        return model
    }

    /// Whether `name` is an ASCII identifier: a letter or underscore, then letters, digits or underscores.
    static func isPlainName(_ name: String) -> Bool {
        guard let first = name.utf8.first, name.utf8.count <= 128 else { return false }
        func isLetter(_ byte: UInt8) -> Bool {
            (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x5F
        }
        return isLetter(first) && name.utf8.allSatisfy { isLetter($0) || ($0 >= 0x30 && $0 <= 0x39) }
    }
}
