import CoexistLegacyStore
import CoexistModel
import CoexistSQLite
import CoexistStore

/// Plans the bridge's side of one version step: `coexist_identity` (identities per root entity and legacy
/// `Z_PK`) rebuilt for the destination's roots — a renamed root's rows take its name, a hierarchy that
/// splits takes its rows along by the table they now live in. Nothing when the bridge never ran.
struct BridgeStepPlanner {
    let connection: Connection
    let source: Model
    let destination: Model
    let mapping: StepMapping
    let layout: PlannedLayout

    /// The step's statements, planned against the file as it is now.
    func plan() throws -> [MigrationStatement] {
        guard try connection.tableExists("coexist_identity") else { return [] }
        var result = [MigrationStatement("ALTER TABLE coexist_identity RENAME TO coexist_old_identity")]
        result += NewSchema.identityTableStatements.map { MigrationStatement($0) }
        for root in destination.entities where root.superentity == nil {
            let origins = Set(
                destination.hierarchy(from: root).compactMap { member -> String? in
                    guard let name = mapping.sources[member.name], let origin = source.entity(named: name)
                    else { return nil }
                    return source.root(of: origin).name
                }
            ).sorted()
            guard !origins.isEmpty, let table = layout.schema.entities[root.name]?.table else { continue }
            let list = Array(repeating: "?", count: origins.count).joined(separator: ", ")
            result.append(
                MigrationStatement(
                    "INSERT INTO coexist_identity (entity, pk, id) SELECT ?, pk, id FROM coexist_old_identity "
                        + "WHERE entity IN (\(list)) AND pk IN (SELECT Z_PK FROM \(table.quotedIdentifier))",
                    [.text(root.name)] + origins.map { .text($0) }
                )
            )
        }
        result.append(MigrationStatement("DROP TABLE coexist_old_identity"))
        return result
    }
}
