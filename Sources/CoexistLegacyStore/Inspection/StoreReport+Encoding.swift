extension StoreReport {
    enum CodingKeys: String, CodingKey {
        case path, storeUUID, storeType, frameworkVersion, modelVersionIdentifiers, modelSource, walMode, entities
        case relationships, history
    }

    /// Encodes every key, writing `null` for absent values (`history` is null when the store has none).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(path, forKey: .path)
        try container.encode(storeUUID, forKey: .storeUUID)
        try container.encode(storeType, forKey: .storeType)
        try container.encode(frameworkVersion, forKey: .frameworkVersion)
        try container.encode(modelVersionIdentifiers, forKey: .modelVersionIdentifiers)
        try container.encode(modelSource, forKey: .modelSource)
        try container.encode(walMode, forKey: .walMode)
        try container.encode(entities, forKey: .entities)
        try container.encode(relationships, forKey: .relationships)
        try container.encode(history, forKey: .history)
    }
}

extension StoreReport.EntityReport {
    enum CodingKeys: String, CodingKey { case name, number, parent, table, rows, maxPK }

    /// Encodes every key; `parent` and `table` are null when absent.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(number, forKey: .number)
        try container.encode(parent, forKey: .parent)
        try container.encode(table, forKey: .table)
        try container.encode(rows, forKey: .rows)
        try container.encode(maxPK, forKey: .maxPK)
    }
}
