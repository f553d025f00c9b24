/// A view of an `NSKeyedArchiver` property list: resolves UIDs into `$objects` and reads the Foundation
/// collection encodings (`NS.keys`/`NS.objects`, `NS.string`, `NSKnownKeysDictionary1`).
///
/// There is no Core Data on Linux to unarchive objects into, so readers walk the graph with this type.
public struct KeyedArchive: Sendable {
    /// The `$objects` array.
    public let objects: [PropertyListValue]
    /// The `$top` dictionary.
    public let top: [String: PropertyListValue]

    /// Wraps a decoded property list; throws when it is not a keyed archive.
    public init(_ plist: PropertyListValue) throws(BinaryPropertyList.Failure) {
        guard let root = plist.dictionary, root["$archiver"]?.string == "NSKeyedArchiver",
            let objects = root["$objects"]?.array, let top = root["$top"]?.dictionary
        else { throw BinaryPropertyList.Failure(message: "not an NSKeyedArchiver archive") }
        self.objects = objects
        self.top = top
    }

    /// Follows a UID to its object; `$null` becomes `.null`; any other value is returned as is.
    public func resolve(_ value: PropertyListValue?) -> PropertyListValue {
        guard let value else { return .null }
        guard case .uid(let index) = value else { return value }
        guard index >= 0, index < objects.count else { return .null }
        let object = objects[index]
        if object.string == "$null" { return .null }
        return object
    }

    /// The class name of an archived object (`NSEntityDescription`).
    public func className(_ value: PropertyListValue?) -> String? {
        resolve(resolve(value).dictionary?["$class"]).dictionary?["$classname"]?.string
    }

    /// The field `key` of an archived object, resolved.
    public func field(_ object: PropertyListValue?, _ key: String) -> PropertyListValue {
        resolve(resolve(object).dictionary?[key])
    }

    /// A string, archived as a plain string or as `NSString`/`NSMutableString` (`NS.string`).
    public func string(_ value: PropertyListValue?) -> String? {
        let object = resolve(value)
        if let text = object.string { return text }
        return resolve(object.dictionary?["NS.string"]).string
    }

    /// The elements of an `NSArray`, `NSSet` or their mutable forms, unresolved (UIDs kept).
    public func array(_ value: PropertyListValue?) -> [PropertyListValue]? {
        resolve(value).dictionary?["NS.objects"]?.array
    }

    /// The entries of an `NSDictionary` (or mutable) or an `NSKnownKeysDictionary1`, in archive order,
    /// with string keys and unresolved values.
    public func dictionary(_ value: PropertyListValue?) -> [(key: String, value: PropertyListValue)]? {
        let object = resolve(value)
        guard let fields = object.dictionary else { return nil }
        if let keys = fields["NS.keys"]?.array, let values = fields["NS.objects"]?.array, keys.count == values.count {
            var entries: [(key: String, value: PropertyListValue)] = []
            for (key, value) in zip(keys, values) {
                guard let name = string(key) else { return nil }
                entries.append((name, value))
            }
            return entries
        }
        // NSKnownKeysDictionary1: values in `values`, keys in searchMapping.keys.
        if let values = array(fields["values"]), let keys = array(field(fields["searchMapping"], "keys")),
            keys.count == values.count
        {
            var entries: [(key: String, value: PropertyListValue)] = []
            for (key, value) in zip(keys, values) {
                guard let name = string(key) else { return nil }
                entries.append((name, value))
            }
            return entries
        }
        return nil
    }
}
