/// Reads `.xcmappingmodel` folders (their `xcmapping.xml`, the Core Data XML store Xcode keeps the editor's
/// objects in) into ``MappingModel``s. Value expressions stored as keyed-archived `NSExpression`s
/// (`valueexpressiondata`) are decoded into ``MappingExpression``s; relationship mappings written as a source
/// key path and a source mapping name become ``MappingExpression/destinationInstances(mapping:keyPath:)``.
public enum MappingModelReader {
    /// Reads the mapping model at `path` (the `.xcmappingmodel` folder or its `xcmapping.xml`).
    public static func read(path: String) throws(ModelError) -> MappingModel {
        let file = path.hasSuffix(".xml") ? path : path + "/xcmapping.xml"
        guard FileBytes.exists(file) else {
            throw ModelError(.missingFile, file: file, message: "no such mapping model")
        }
        let root = try XMLTree.parse(try FileBytes.read(file), file: file)
        var objects: [String: XMLNode] = [:]
        for node in root.children(named: "object") {
            if let id = node.attributes["id"] { objects[id] = node }
        }
        func value(_ node: XMLNode, _ name: String) -> String? {
            node.children(named: "attribute").first { $0.attributes["name"] == name }?.text
        }
        func references(_ node: XMLNode, _ name: String) -> [XMLNode] {
            let list =
                node.children(named: "relationship").first { $0.attributes["name"] == name }?
                .attributes["idrefs"] ?? ""
            return list.split(separator: " ").compactMap { objects[String($0)] }
        }
        func property(_ node: XMLNode) throws(ModelError) -> MappingModel.PropertyMapping? {
            guard let name = value(node, "name") else { return nil }
            var expression: MappingExpression?
            if let keyPath = value(node, "sourcekeypath") {
                let path = MappingExpression.keyPath(parsing: keyPath)
                expression =
                    value(node, "sourcemappingname").map { .destinationInstances(mapping: $0, keyPath: path) }
                    ?? .keyPath(path)
            }
            if let archived = value(node, "valueexpressiondata") {
                expression = try decodeExpression(archived, file: file, line: node.line)
            }
            return MappingModel.PropertyMapping(name: name, value: expression)
        }
        var mappings: [(Int, MappingModel.EntityMapping)] = []
        for node in objects.values where node.attributes["type"] == "XDDEVENTITYMAPPING" {
            let source = value(node, "sourcename").flatMap { $0.isEmpty ? nil : $0 }
            let destination = value(node, "destinationname").flatMap { $0.isEmpty ? nil : $0 }
            var attributes: [MappingModel.PropertyMapping] = []
            for child in references(node, "attributemappings") {
                if let mapping = try property(child) { attributes.append(mapping) }
            }
            var relationships: [MappingModel.PropertyMapping] = []
            for child in references(node, "relationshipmappings") {
                if let mapping = try property(child) { relationships.append(mapping) }
            }
            let mapping = MappingModel.EntityMapping(
                name: (source ?? "") + "To" + (destination ?? ""),
                source: source,
                destination: destination,
                type: value(node, "mappingtypename") ?? "Undefined",
                policy: value(node, "migrationpolicyclassname").flatMap { $0.isEmpty ? nil : $0 },
                attributes: attributes.sorted { $0.name < $1.name },
                relationships: relationships.sorted { $0.name < $1.name }
            )
            mappings.append((Int(value(node, "mappingnumber") ?? "") ?? Int.max, mapping))
        }
        let model = objects.values.first { $0.attributes["type"] == "XDDEVMAPPINGMODEL" }
        return MappingModel(
            path: path,
            sourceModelPath: model.flatMap { value($0, "sourcemodelpath") },
            destinationModelPath: model.flatMap { value($0, "destinationmodelpath") },
            entityMappings: mappings.sorted { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1.name < $1.1.name }.map(\.1)
        )
    }

    /// Decodes a base64 keyed-archived `NSExpression`.
    static func decodeExpression(_ base64: String, file: String, line: Int) throws(ModelError) -> MappingExpression {
        guard let bytes = Base64.decode(base64.filter { !$0.isWhitespace }) else {
            throw ModelError(file: file, line: line, message: "valueexpressiondata is not base64")
        }
        let archive: KeyedArchive
        do {
            archive = try KeyedArchive(try BinaryPropertyList.decode(bytes))
        } catch {
            throw ModelError(
                file: file,
                line: line,
                message: "valueexpressiondata is not a keyed archive: \(error.message)"
            )
        }
        return expression(archive.top["root"], in: archive, depth: 0)
    }

    /// One archived `NSExpression` (types: 0 constant, 2 variable, 3 key path, 4 function, 10 key path
    /// specifier).
    static func expression(_ value: PropertyListValue?, in archive: KeyedArchive, depth: Int) -> MappingExpression {
        guard depth < 16 else { return .unsupported("nested too deep") }
        let type = archive.field(value, "NSExpressionType").integer ?? -1
        switch type {
        case 0:
            let constant = archive.field(value, "NSConstantValue")
            return .constant(archive.string(constant).map { .string($0) } ?? archive.resolve(constant))
        case 3, 10:
            guard let path = archive.string(archive.field(value, "NSKeyPath")) else { return .unsupported("key path") }
            return .keyPath(MappingExpression.keyPath(parsing: path))
        case 4:
            let selector = archive.string(archive.field(value, "NSSelectorName")) ?? ""
            let operand = archive.string(archive.field(archive.field(value, "NSOperand"), "NSVariable"))
            let arguments = (archive.array(archive.field(value, "NSArguments")) ?? []).map {
                expression($0, in: archive, depth: depth + 1)
            }
            if operand == "source", selector == "valueForKeyPath:", arguments.count == 1 {
                if case .keyPath(let path) = arguments[0] { return .keyPath(path) }
                if case .constant(.string(let path)) = arguments[0] {
                    return .keyPath(MappingExpression.keyPath(parsing: path))
                }
            }
            if operand == "manager", selector == "destinationInstancesForEntityMappingNamed:sourceInstances:",
                arguments.count == 2, case .constant(.string(let name)) = arguments[0],
                case .keyPath(let path) = arguments[1]
            {
                return .destinationInstances(mapping: name, keyPath: path)
            }
            return .unsupported("FUNCTION($\(operand ?? "?"), \"\(selector)\", …)")
        default:
            return .unsupported("NSExpression type \(type) (\(archive.className(value) ?? "?"))")
        }
    }
}
