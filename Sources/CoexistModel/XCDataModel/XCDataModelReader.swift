/// Reads models from Xcode model files: an `.xcdatamodeld` folder of versions, one `.xcdatamodel` folder,
/// or a `contents` file (coredata-sqlite-format.md §5).
public enum XCDataModelReader {
    /// One version of a versioned model.
    public struct Version: Sendable {
        /// The version's folder name without extension (`TaskModel 2`).
        public var name: String
        /// The version's model.
        public var model: Model
        /// Whether `.xccurrentversion` names this version.
        public var isCurrent: Bool
    }

    /// Reads the model at `path`: for an `.xcdatamodeld`, its current version.
    ///
    /// Throws ``ModelError`` naming the file for a missing path, a missing or unreadable
    /// `.xccurrentversion`, a current version that does not exist, or invalid model content.
    public static func read(path: String) throws(ModelError) -> Model {
        let trimmed = trimmingSlashes(path)
        if trimmed.hasSuffix(".xcdatamodeld") {
            let name = try currentVersionName(of: trimmed)
            return try readVersion(folder: trimmed, name: name)
        }
        if FileBytes.isDirectory(trimmed) { return try readContents(trimmed + "/contents") }
        guard FileBytes.exists(trimmed) else {
            throw ModelError(.missingFile, file: trimmed, message: "no such model file or folder")
        }
        return try readContents(trimmed)
    }

    /// Reads every version in an `.xcdatamodeld` folder, sorted by name with numbers compared as numbers
    /// (`Moody`, `Moody 2`, …, `Moody 10`), marking the current one.
    public static func readVersions(path: String) throws(ModelError) -> [Version] {
        let folder = trimmingSlashes(path)
        let current = try currentVersionName(of: folder)
        var versions: [Version] = []
        for entry in try FileBytes.directoryEntries(folder) where entry.hasSuffix(".xcdatamodel") {
            let name = String(entry.dropLast(".xcdatamodel".count))
            let model = try readContents(folder + "/" + entry + "/contents")
            versions.append(Version(name: name, model: model, isCurrent: name == current))
        }
        return versions.sorted { naturallyPrecedes($0.name, $1.name) }
    }

    /// Whether `a` sorts before `b` when runs of ASCII digits compare by value (`Model 2` < `Model 10`).
    static func naturallyPrecedes(_ a: String, _ b: String) -> Bool {
        func runs(_ text: String) -> [(digits: Bool, text: Substring)] {
            var result: [(Bool, Substring)] = []
            var start = text.startIndex
            while start < text.endIndex {
                let isDigit = text[start].isASCII && text[start].isNumber
                var end = text.index(after: start)
                while end < text.endIndex, (text[end].isASCII && text[end].isNumber) == isDigit {
                    end = text.index(after: end)
                }
                result.append((isDigit, text[start..<end]))
                start = end
            }
            return result
        }
        for (x, y) in zip(runs(a), runs(b)) where x.text != y.text {
            if x.digits && y.digits {
                let (p, q) = (x.text.drop { $0 == "0" }, y.text.drop { $0 == "0" })
                if p.count != q.count { return p.count < q.count }
                if p != q { return p.utf8.lexicographicallyPrecedes(q.utf8) }
                return x.text.count < y.text.count
            }
            return x.text.utf8.lexicographicallyPrecedes(y.text.utf8)
        }
        return a.utf8.count < b.utf8.count || (a.utf8.count == b.utf8.count && a.utf8.lexicographicallyPrecedes(b.utf8))
    }

    /// The current version's name (without `.xcdatamodel`) from the folder's `.xccurrentversion` plist.
    ///
    /// A folder with no `.xccurrentversion` but exactly one version uses that version.
    public static func currentVersionName(of folder: String) throws(ModelError) -> String {
        guard FileBytes.isDirectory(folder) else {
            throw ModelError(.missingFile, file: folder, message: "no such model folder")
        }
        let markerPath = folder + "/.xccurrentversion"
        guard FileBytes.exists(markerPath) else {
            let versions = try FileBytes.directoryEntries(folder).filter { $0.hasSuffix(".xcdatamodel") }
            guard versions.count == 1 else {
                throw ModelError(
                    .missingFile,
                    file: markerPath,
                    message: "missing, and the folder holds \(versions.count) versions: cannot tell which is current"
                )
            }
            return String(versions[0].dropLast(".xcdatamodel".count))
        }
        let plist = try XMLTree.parse(try FileBytes.read(markerPath), file: markerPath)
        guard let dict = plist.child(named: "dict") else {
            throw ModelError(file: markerPath, line: plist.line, message: "expected a plist dictionary")
        }
        var value: String?
        for (offset, node) in dict.children.enumerated()
        where node.name == "key" && node.text == "_XCCurrentVersionName" && offset + 1 < dict.children.count {
            value = dict.children[offset + 1].text
        }
        guard var name = value, !name.isEmpty else {
            throw ModelError(file: markerPath, line: dict.line, message: "no _XCCurrentVersionName key")
        }
        if name.hasSuffix(".xcdatamodel") { name.removeLast(".xcdatamodel".count) }
        guard !name.contains("/"), FileBytes.isDirectory(folder + "/" + name + ".xcdatamodel") else {
            throw ModelError(
                .invalidContent,
                file: markerPath,
                message: "names current version \"\(name).xcdatamodel\", which is not in \(folder)"
            )
        }
        return name
    }

    private static func readVersion(folder: String, name: String) throws(ModelError) -> Model {
        try readContents(folder + "/" + name + ".xcdatamodel/contents")
    }

    /// Reads one `contents` XML file.
    public static func readContents(_ file: String) throws(ModelError) -> Model {
        try decodeContents(try FileBytes.read(file), file: file)
    }

    /// Decodes the bytes of a `contents` XML file; errors name `file`.
    public static func decodeContents(_ bytes: [UInt8], file: String) throws(ModelError) -> Model {
        try ModelXMLDecoder(file: file).decode(try XMLTree.parse(bytes, file: file))
    }

    private static func trimmingSlashes(_ path: String) -> String {
        var result = path
        while result.count > 1 && result.hasSuffix("/") { result.removeLast() }
        return result
    }
}

extension XCDataModelReader.Version {
    /// The version of `versions` a store's model is: the one with the same structure (entities, hierarchy,
    /// attributes, relationships — what is stored), preferring, among several, one whose version
    /// identifiers are the store's. Nil when none matches (a model from elsewhere).
    public static func matching(
        _ storeModel: Model,
        identifiers: [String],
        in versions: [XCDataModelReader.Version]
    ) -> XCDataModelReader.Version? {
        let same = versions.filter { $0.model.structuralDifferences(from: storeModel).isEmpty }
        return same.first { !identifiers.isEmpty && $0.model.versionIdentifiers == identifiers } ?? same.last
    }
}
