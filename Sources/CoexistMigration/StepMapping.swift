import CoexistModel

/// How one version step fills each destination entity: from which source entity's rows, and each property
/// from what. Inferred (lightweight) steps get it from ``ModelChanges`` (renaming identifiers, then names);
/// steps with a mapping model from its entity and property mappings. Both formats' planners run it.
///
/// Rows keep their key (`Z_PK`, `id`) from source to destination: that is what makes a mapping's
/// `destinationInstancesForEntityMappingNamed:sourceInstances:` a plain key path in SQL (the destination
/// instance of a source object has its key).
struct StepMapping: Sendable {
    /// Where one destination property's value comes from.
    enum Value: Sendable, Hashable {
        /// The source entity's property of this name (an attribute, or a to-one's key).
        case property(String)
        /// A key path from the source row through to-ones, ending at an attribute or a to-one's key.
        case keyPath([String])
        /// A constant.
        case constant(AttributeValue)
    }

    /// One destination entity filled from one source entity.
    struct Fill: Sendable {
        var destination: Entity
        var source: Entity
        /// Values by destination attribute name; absent: the model's default (or null).
        var attributes: [String: Value]
        /// Values by destination relationship name; absent: empty.
        var relationships: [String: Value]
    }

    var fills: [Fill]

    /// Destination entity → the source entity its rows come from.
    var sources: [String: String] {
        Dictionary(fills.map { ($0.destination.name, $0.source.name) }, uniquingKeysWith: { first, _ in first })
    }

    /// The mapping Core Data would infer.
    static func inferred(from source: Model, to destination: Model, changes: ModelChanges) -> StepMapping {
        var fills: [Fill] = []
        for entity in destination.entities {
            guard case let name?? = changes.entitySources[entity.name], let origin = source.entity(named: name) else {
                continue
            }
            var fill = Fill(destination: entity, source: origin, attributes: [:], relationships: [:])
            for attribute in destination.allAttributes(of: entity) where !attribute.isTransient {
                if let previous = ModelChanges.origin(of: attribute, in: origin, of: source) {
                    fill.attributes[attribute.name] = .property(previous.name)
                }
            }
            for relationship in destination.allRelationships(of: entity) where !relationship.isTransient {
                if let previous = ModelChanges.origin(of: relationship, in: origin, of: source) {
                    fill.relationships[relationship.name] = .property(previous.name)
                }
            }
            fills.append(fill)
        }
        return StepMapping(fills: fills)
    }

    /// The mapping a mapping model describes; throws ``MigrationError`` for what it cannot run as SQL (a
    /// custom policy, an expression other than a key path or a constant, a mapping naming another one whose
    /// instances are not keyed like the key path's end).
    static func mapped(
        _ model: MappingModel,
        from source: Model,
        to destination: Model,
        path: String,
        step: String,
        stage: MigrationStage? = nil
    ) throws -> StepMapping {
        func unsupported(_ detail: String) -> MigrationError {
            .unsupported(path: path, step: step, detail: "mapping model \(model.path): \(detail)")
        }
        var fills: [Fill] = []
        for mapping in model.entityMappings {
            // A policy is code: a registered stage stands in for it (the mapping's own part still runs here).
            if let policy = mapping.policy, stage?.covers(policy: policy) != true {
                throw MigrationError.customPolicy(path: path, step: step, policy: policy)
            }
            guard let destinationName = mapping.destination, let sourceName = mapping.source else { continue }
            guard let entity = destination.entity(named: destinationName), let origin = source.entity(named: sourceName)
            else {
                throw unsupported("\(mapping.name) maps \(sourceName) to \(destinationName): not both in the models")
            }
            var fill = Fill(destination: entity, source: origin, attributes: [:], relationships: [:])
            let sourceAttributes = Set(source.allAttributes(of: origin).filter { !$0.isTransient }.map(\.name))
            let sourceToOnes = Set(source.allRelationships(of: origin).filter { !$0.isTransient }.map(\.name))
            for property in mapping.attributes {
                switch property.value {
                case nil where sourceAttributes.contains(property.name):
                    fill.attributes[property.name] = .property(property.name)
                case nil: break
                case .keyPath(let keyPath)?:
                    fill.attributes[property.name] = keyPath.count == 1 ? .property(keyPath[0]) : .keyPath(keyPath)
                case .constant(let constant)?:
                    guard let value = Self.attributeValue(constant) else {
                        throw unsupported("\(destinationName).\(property.name): constant \(constant)")
                    }
                    fill.attributes[property.name] = .constant(value)
                case let other?:
                    throw unsupported("\(destinationName).\(property.name) = \(other)")
                }
            }
            for property in mapping.relationships {
                guard
                    let relationship = destination.allRelationships(of: entity).first(where: {
                        $0.name == property.name
                    })
                else { continue }
                switch property.value {
                case nil where sourceToOnes.contains(property.name):
                    fill.relationships[property.name] = .property(property.name)
                case nil: break
                case .destinationInstances(let named, let keyPath)?:
                    guard let other = model.entityMappings.first(where: { $0.name == named }),
                        other.destination == relationship.destination
                    else {
                        throw unsupported(
                            "\(destinationName).\(property.name): mapping \(named) does not make \(relationship.destination)s"
                        )
                    }
                    if relationship.isToMany {
                        // Kept by its inverse to-one when that is mapped too; otherwise not expressible here.
                        guard let inverse = destination.inverse(of: relationship), !inverse.isToMany else {
                            throw unsupported("\(destinationName).\(property.name): a to-many filled by \(named)")
                        }
                        continue
                    }
                    // The instances of `named` are its source's rows under the same keys: only when the key
                    // path ends at that source (or a hierarchy holding it) do the keys name them.
                    guard let end = Self.end(of: keyPath, from: origin, in: source), let otherSource = other.source,
                        source.hierarchy(from: end).contains(where: { $0.name == otherSource })
                            || source.ancestry(of: end).contains(where: { $0.name == otherSource })
                    else {
                        throw unsupported(
                            "\(destinationName).\(property.name): mapping \(named) does not make the "
                                + "\(relationship.destination)s its key path reaches"
                        )
                    }
                    fill.relationships[property.name] = keyPath.count == 1 ? .property(keyPath[0]) : .keyPath(keyPath)
                case .keyPath(let keyPath)? where !relationship.isToMany:
                    fill.relationships[property.name] = keyPath.count == 1 ? .property(keyPath[0]) : .keyPath(keyPath)
                case let other?:
                    throw unsupported("\(destinationName).\(property.name) = \(other)")
                }
            }
            fills.append(fill)
        }
        // One destination entity from one source entity, and back: two would share keys (and identities),
        // and old history would decode two entities as one.
        for (name, count) in Dictionary(fills.map { ($0.destination.name, 1) }, uniquingKeysWith: +) where count > 1 {
            throw unsupported("\(name) is filled by \(count) entity mappings")
        }
        for (name, count) in Dictionary(fills.map { ($0.source.name, 1) }, uniquingKeysWith: +) where count > 1 {
            throw unsupported("\(name) is mapped to \(count) destination entities")
        }
        return StepMapping(fills: fills)
    }

    /// The entity a key path of to-ones from `origin` ends at (its last to-one's destination).
    static func end(of keyPath: [String], from origin: Entity, in model: Model) -> Entity? {
        var current = origin
        for component in keyPath {
            guard let relationship = model.allRelationships(of: current).first(where: { $0.name == component }),
                !relationship.isToMany, let next = model.entity(named: relationship.destination)
            else { return nil }
            current = next
        }
        return current
    }

    /// Applies a declared transform: each assignment replaces the value its destination property gets.
    mutating func apply(_ transform: StepTransform, to destination: Model, path: String, step: String) throws {
        for assignment in transform.assignments {
            func refuse(_ detail: String) -> MigrationError {
                .unsupported(path: path, step: step, detail: "\(assignment.location): \(detail)")
            }
            guard let entity = destination.entity(named: assignment.entity) else {
                throw refuse("version \(transform.to) has no entity \(assignment.entity)")
            }
            let targets = fills.indices.filter {
                destination.hierarchy(from: entity).map(\.name).contains(fills[$0].destination.name)
            }
            guard !targets.isEmpty else { throw refuse("no rows of \(assignment.entity) come from the source version") }
            let value: Value
            switch assignment.value {
            case .keyPath(let keyPath): value = keyPath.count == 1 ? .property(keyPath[0]) : .keyPath(keyPath)
            case .constant(let constant):
                guard let converted = Self.attributeValue(constant) else { throw refuse("constant \(constant)") }
                value = .constant(converted)
            default: throw refuse("\(assignment.value)")
            }
            let isAttribute = destination.allAttributes(of: entity).contains {
                $0.name == assignment.property && !$0.isTransient
            }
            let isToOne = destination.allRelationships(of: entity).contains {
                $0.name == assignment.property && !$0.isToMany && !$0.isTransient
            }
            guard isAttribute || isToOne else {
                throw refuse(
                    "\(assignment.entity).\(assignment.property) is not a stored attribute or to-one of version \(transform.to)"
                )
            }
            if isToOne, case .constant = value { throw refuse("a to-one takes a key path, not a constant") }
            for index in targets {
                if isAttribute {
                    fills[index].attributes[assignment.property] = value
                } else {
                    fills[index].relationships[assignment.property] = value
                }
            }
        }
    }

    /// A constant of a mapping as an attribute value.
    static func attributeValue(_ constant: PropertyListValue) -> AttributeValue? {
        switch constant {
        case .null: .null
        case .boolean(let flag): .boolean(flag)
        case .integer(let number): .integer(number)
        case .real(let number): .double(number)
        case .string(let text): .string(text)
        case .date(let seconds): .date(seconds)
        case .data(let bytes): .binary(bytes)
        default: nil
        }
    }
}
