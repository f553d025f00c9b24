import CoexistSQLite

/// Which transactions a history listing keeps: a token range, a time range, an author, and changes of an
/// entity, a type or a side. Every condition is evaluated in SQL over `ATRANSACTION` and the change tables'
/// indexes, so a listing reads only what it prints.
///
/// A transaction matches when it passes every condition given; `entity`, `types` and `side` ask for at least
/// one change that has all three at once (an insert of a `Task` with `--entity Task --type insert`).
public struct HistoryFilter: Sendable, Hashable {
    /// Only tokens greater than this.
    public var since: Int64
    /// Only tokens at most this.
    public var until: Int64
    /// Only transactions saved at or after this time (seconds since 2001).
    public var after: Double?
    /// Only transactions saved before this time (seconds since 2001).
    public var before: Double?
    /// Only transactions whose author is this.
    public var author: String?
    /// Only transactions with a change to one of these entities; nil: any entity.
    public var entity: Entities?
    /// Only transactions with a change of one of these types; empty: any type.
    public var types: Set<ChangeType>
    /// Only transactions saved by this side (`HistoryTransaction.side`).
    public var side: Side?

    /// Entities as each side records them: the legacy side's entity numbers (`ACHANGE.ZENTITY`) and the
    /// new side's names (`coexist_change.entity`); the caller includes sub-entities.
    public struct Entities: Sendable, Hashable {
        /// `Z_ENT` numbers.
        public var numbers: [Int]
        /// Entity names.
        public var names: [String]

        /// Creates the selection.
        public init(numbers: [Int], names: [String]) {
            self.numbers = numbers
            self.names = names
        }
    }

    /// A filter that keeps every transaction.
    public init() {
        since = 0
        until = .max
        types = []
    }

    /// Whether a change-level condition (entity, type) applies.
    var filtersChanges: Bool { entity != nil || !types.isEmpty }

    /// The `WHERE` clause over `ATRANSACTION t` (joined with its author string as `a`), and its arguments.
    func clause(hasCompanion: Bool) -> (sql: String, arguments: [SQLiteValue]) {
        var conditions = ["t.Z_PK > ?", "t.Z_PK <= ?"]
        var arguments: [SQLiteValue] = [.integer(since), .integer(until)]
        if let after {
            conditions.append("t.ZTIMESTAMP >= ?")
            arguments.append(.real(after))
        }
        if let before {
            conditions.append("t.ZTIMESTAMP < ?")
            arguments.append(.real(before))
        }
        if let author {
            conditions.append("coalesce(a.ZNAME, t.ZAUTHOR) = ?")
            arguments.append(.text(author))
        }
        let newChange = "EXISTS (SELECT 1 FROM coexist_change n WHERE n.token = t.Z_PK)"
        switch side {
        case .new?: conditions.append(hasCompanion ? newChange : "0")
        case .legacy?: if hasCompanion { conditions.append("NOT " + newChange) }
        case nil: break
        }
        if filtersChanges {
            let typeList = types.map { String($0.rawValue) }.sorted().joined(separator: ", ")
            var legacy = ["c.ZTRANSACTIONID = t.Z_PK"]
            var new = ["n.token = t.Z_PK"]
            if !types.isEmpty {
                legacy.append("c.ZCHANGETYPE IN (\(typeList))")
                new.append("n.type IN (\(typeList))")
            }
            if let entity {
                legacy.append("c.ZENTITY IN (\(entity.numbers.map(String.init).joined(separator: ", ")))")
                new.append("n.entity IN (\(entity.names.map { _ in "?" }.joined(separator: ", ")))")
            }
            var options: [String] = []
            if side != .new && entity?.numbers.isEmpty != true {
                options.append("EXISTS (SELECT 1 FROM ACHANGE c WHERE \(legacy.joined(separator: " AND ")))")
            }
            if side != .legacy && hasCompanion && entity?.names.isEmpty != true {
                options.append("EXISTS (SELECT 1 FROM coexist_change n WHERE \(new.joined(separator: " AND ")))")
                arguments += entity?.names.map { .text($0) } ?? []
            }
            conditions.append(options.isEmpty ? "0" : "(" + options.joined(separator: " OR ") + ")")
        }
        return (conditions.joined(separator: " AND "), arguments)
    }
}
