internal import CLibXML2

/// A parsed XML element: its name, attributes, text and child elements, with the line it starts on.
struct XMLNode: Sendable {
    var name: String
    var attributes: [String: String]
    var children: [XMLNode]
    var text: String
    var line: Int

    /// The child elements named `name`.
    func children(named name: String) -> [XMLNode] { children.filter { $0.name == name } }

    /// The first child element named `name`.
    func child(named name: String) -> XMLNode? { children.first { $0.name == name } }
}

/// Parses XML into ``XMLNode`` trees with libxml2's reader API (http://xmlsoft.org/xmlreader.html).
///
/// The network is never used (`XML_PARSE_NONET`), external DTDs are not loaded and entities are not
/// substituted. libxml2's own messages are captured, not printed: the first one becomes a ``ModelError``
/// with its line.
enum XMLTree {
    /// Elements may nest this deep at most; model files nest four levels.
    static let depthLimit = 64

    static func parse(_ bytes: [UInt8], file: String) throws(ModelError) -> XMLNode {
        let errors = ErrorSink()
        let maybeReader = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                xmlReaderForMemory(chars.baseAddress, Int32(chars.count), nil, nil, Int32(XML_PARSE_NONET.rawValue))
            }
        }
        guard let reader = maybeReader else { throw ModelError(file: file, message: "cannot start the XML parser") }
        defer { xmlFreeTextReader(reader) }
        let sinkPointer = Unmanaged.passUnretained(errors).toOpaque()
        xmlTextReaderSetStructuredErrorHandler(reader, xmlErrorCallback, sinkPointer)

        var stack: [XMLNode] = []
        var root: XMLNode?
        while true {
            let status = xmlTextReaderRead(reader)
            if status == 0 { break }
            guard status == 1 else {
                throw ModelError(
                    file: file,
                    line: errors.line,
                    message: "malformed XML: \(errors.message ?? "parse error")"
                )
            }
            let line =
                xmlTextReaderCurrentNode(reader).map { Int(xmlGetLineNo($0)) }
                ?? Int(xmlTextReaderGetParserLineNumber(reader))
            switch xmlTextReaderNodeType(reader) {
            case 1:  // element
                var node = XMLNode(
                    name: string(xmlTextReaderConstName(reader)),
                    attributes: [:],
                    children: [],
                    text: "",
                    line: line
                )
                let isEmpty = xmlTextReaderIsEmptyElement(reader) == 1
                if xmlTextReaderMoveToFirstAttribute(reader) == 1 {
                    repeat {
                        node.attributes[string(xmlTextReaderConstName(reader))] = string(
                            xmlTextReaderConstValue(reader)
                        )
                    } while xmlTextReaderMoveToNextAttribute(reader) == 1
                    xmlTextReaderMoveToElement(reader)
                }
                guard stack.count < depthLimit else {
                    throw ModelError(file: file, line: line, message: "XML nests deeper than \(depthLimit) levels")
                }
                if isEmpty { try attach(node, to: &stack, root: &root, file: file) } else { stack.append(node) }
            case 3, 4:  // text, CDATA
                if !stack.isEmpty { stack[stack.count - 1].text += string(xmlTextReaderConstValue(reader)) }
            case 15:  // end of element
                guard let node = stack.popLast() else { continue }
                try attach(node, to: &stack, root: &root, file: file)
            default: continue
            }
        }
        if let message = errors.message {
            throw ModelError(file: file, line: errors.line, message: "malformed XML: \(message)")
        }
        guard let root, stack.isEmpty else { throw ModelError(file: file, message: "no XML document element") }
        return root
    }

    private static func attach(
        _ node: XMLNode,
        to stack: inout [XMLNode],
        root: inout XMLNode?,
        file: String
    ) throws(ModelError) {
        if stack.isEmpty {
            guard root == nil else {
                throw ModelError(file: file, line: node.line, message: "more than one document element")
            }
            root = node
        } else {
            stack[stack.count - 1].children.append(node)
        }
    }

    private static func string(_ pointer: UnsafePointer<xmlChar>?) -> String {
        guard let pointer else { return "" }
        return String(cString: pointer)
    }
}

/// Collects the first error libxml2 reports.
private final class ErrorSink {
    var message: String?
    var line: Int?
}

private let xmlErrorCallback: xmlStructuredErrorFunc = { context, error in
    guard let context, let error else { return }
    let sink = Unmanaged<ErrorSink>.fromOpaque(context).takeUnretainedValue()
    guard sink.message == nil else { return }
    let text = error.pointee.message.map { String(cString: $0) } ?? "XML error \(error.pointee.code)"
    sink.message = text.trimmingTrailingWhitespace()
    sink.line = error.pointee.line > 0 ? Int(error.pointee.line) : nil
}

extension String {
    func trimmingTrailingWhitespace() -> String {
        var result = self
        while let last = result.last, last.isWhitespace { result.removeLast() }
        return result
    }
}
