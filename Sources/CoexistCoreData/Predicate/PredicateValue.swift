public import Foundation

/// A constant in a predicate: a format argument (`%@`, `%d`, …) or a literal of the format string.
public enum PredicateValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case integer(Int64)
    case real(Double)
    case string(String)
    case date(Date)
    case uuid(UUID)
    case data(Data)
    case decimal(Decimal)
    case url(URL)
    /// A managed object or its identity: compared with the relationship's foreign key.
    case object(ManagedObjectID)
    /// An array or set (for `IN`, `BETWEEN`).
    case list([PredicateValue])
}

/// A value that can be passed as a predicate's format argument.
public protocol PredicateArgument {
    /// The argument as a predicate constant.
    var predicateValue: PredicateValue { get }
}

extension String: PredicateArgument { public var predicateValue: PredicateValue { .string(self) } }
extension Substring: PredicateArgument { public var predicateValue: PredicateValue { .string(String(self)) } }
extension Bool: PredicateArgument { public var predicateValue: PredicateValue { .bool(self) } }
extension Int: PredicateArgument { public var predicateValue: PredicateValue { .integer(Int64(self)) } }
extension Int16: PredicateArgument { public var predicateValue: PredicateValue { .integer(Int64(self)) } }
extension Int32: PredicateArgument { public var predicateValue: PredicateValue { .integer(Int64(self)) } }
extension Int64: PredicateArgument { public var predicateValue: PredicateValue { .integer(self) } }
extension Double: PredicateArgument { public var predicateValue: PredicateValue { .real(self) } }
extension Float: PredicateArgument { public var predicateValue: PredicateValue { .real(Double(self)) } }
extension Date: PredicateArgument { public var predicateValue: PredicateValue { .date(self) } }
extension UUID: PredicateArgument { public var predicateValue: PredicateValue { .uuid(self) } }
extension Data: PredicateArgument { public var predicateValue: PredicateValue { .data(self) } }
extension Decimal: PredicateArgument { public var predicateValue: PredicateValue { .decimal(self) } }
extension URL: PredicateArgument { public var predicateValue: PredicateValue { .url(self) } }
extension ManagedObjectID: PredicateArgument { public var predicateValue: PredicateValue { .object(self) } }
extension ManagedObject: PredicateArgument { public var predicateValue: PredicateValue { .object(objectID) } }
extension PredicateValue: PredicateArgument { public var predicateValue: PredicateValue { self } }

extension Array: PredicateArgument where Element: PredicateArgument {
    public var predicateValue: PredicateValue { .list(map(\.predicateValue)) }
}

extension Set: PredicateArgument where Element: PredicateArgument {
    public var predicateValue: PredicateValue { .list(map(\.predicateValue)) }
}

extension Optional: PredicateArgument where Wrapped: PredicateArgument {
    public var predicateValue: PredicateValue { self?.predicateValue ?? .null }
}
