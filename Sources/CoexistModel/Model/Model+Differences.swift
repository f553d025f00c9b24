extension Model {
    /// The structural differences between two models, one line each; empty when they describe the same
    /// entities, inheritance, attributes (name, type, optional, transient) and relationships (destination,
    /// inverse, cardinality, order, delete rule).
    ///
    /// Class names, defaults, indexes and editor details are ignored: they do not change what is stored.
    public func structuralDifferences(from other: Model) -> [String] {
        var lines: [String] = []
        let names = Set(entities.map(\.name)).union(other.entities.map(\.name)).sorted()
        for name in names {
            guard let mine = entity(named: name) else {
                lines.append("entity \(name): only in \(other.source)")
                continue
            }
            guard let theirs = other.entity(named: name) else {
                lines.append("entity \(name): only in \(source)")
                continue
            }
            if mine.superentity != theirs.superentity {
                lines.append(
                    "entity \(name): super-entity \(mine.superentity ?? "none") ≠ \(theirs.superentity ?? "none")"
                )
            }
            if mine.isAbstract != theirs.isAbstract {
                lines.append("entity \(name): abstract \(mine.isAbstract) ≠ \(theirs.isAbstract)")
            }
            lines += Self.compare(name, mine.attributes, theirs.attributes, key: \.name) { a, b in
                var diffs: [String] = []
                if a.type != b.type { diffs.append("type \(a.type.xmlName) ≠ \(b.type.xmlName)") }
                if a.isOptional != b.isOptional { diffs.append("optional \(a.isOptional) ≠ \(b.isOptional)") }
                if a.isTransient != b.isTransient { diffs.append("transient \(a.isTransient) ≠ \(b.isTransient)") }
                return diffs
            }
            lines += Self.compare(name, mine.relationships, theirs.relationships, key: \.name) { a, b in
                var diffs: [String] = []
                if a.destination != b.destination { diffs.append("destination \(a.destination) ≠ \(b.destination)") }
                if a.inverse != b.inverse { diffs.append("inverse \(a.inverse ?? "none") ≠ \(b.inverse ?? "none")") }
                if a.isToMany != b.isToMany { diffs.append("to-many \(a.isToMany) ≠ \(b.isToMany)") }
                if a.isOrdered != b.isOrdered { diffs.append("ordered \(a.isOrdered) ≠ \(b.isOrdered)") }
                if a.deleteRule != b.deleteRule {
                    diffs.append("delete rule \(a.deleteRule.xmlName) ≠ \(b.deleteRule.xmlName)")
                }
                return diffs
            }
        }
        return lines
    }

    private static func compare<P>(
        _ entity: String,
        _ mine: [P],
        _ theirs: [P],
        key: KeyPath<P, String>,
        _ details: (P, P) -> [String]
    ) -> [String] {
        var lines: [String] = []
        let mineByName = Dictionary(mine.map { ($0[keyPath: key], $0) }, uniquingKeysWith: { first, _ in first })
        let theirsByName = Dictionary(theirs.map { ($0[keyPath: key], $0) }, uniquingKeysWith: { first, _ in first })
        for name in Set(mineByName.keys).union(theirsByName.keys).sorted() {
            switch (mineByName[name], theirsByName[name]) {
            case (let a?, let b?):
                lines += details(a, b).map { "entity \(entity), property \(name): \($0)" }
            case (_?, nil): lines.append("entity \(entity), property \(name): missing in the second model")
            case (nil, _?): lines.append("entity \(entity), property \(name): missing in the first model")
            case (nil, nil): break
            }
        }
        return lines
    }
}
