extension BinaryPropertyList {
    /// Encodes `value` as a `bplist00` binary property list.
    ///
    /// Dictionaries are written with sorted keys so that the same value always gives the same bytes.
    /// Objects are not shared: each occurrence is written once where it appears.
    public static func encode(_ value: PropertyListValue) -> [UInt8] {
        var writer = Writer()
        writer.flatten(value)
        return writer.finish()
    }

    private struct Writer {
        var objects: [PropertyListValue] = []
        var references: [[Int]] = []  // for containers: child object numbers (dictionary: keys then values)

        mutating func flatten(_ value: PropertyListValue) {
            let index = objects.count
            objects.append(value)
            references.append([])
            switch value {
            case .array(let elements):
                var children: [Int] = []
                for element in elements {
                    children.append(objects.count)
                    flatten(element)
                }
                references[index] = children
            case .dictionary(let dictionary):
                let keys = dictionary.keys.sorted()
                var children: [Int] = []
                for key in keys {
                    children.append(objects.count)
                    flatten(.string(key))
                }
                for key in keys {
                    children.append(objects.count)
                    flatten(dictionary[key] ?? .null)
                }
                references[index] = children
            default: break
            }
        }

        func finish() -> [UInt8] {
            let referenceSize = byteCount(UInt64(objects.count))
            var body: [UInt8] = Array("bplist00".utf8)
            var offsets: [Int] = []
            for (index, object) in objects.enumerated() {
                offsets.append(body.count)
                body += encodeObject(object, children: references[index], referenceSize: referenceSize)
            }
            let tableOffset = body.count
            let offsetSize = byteCount(UInt64(tableOffset))
            for offset in offsets { body += bigEndian(UInt64(offset), size: offsetSize) }
            body += [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(referenceSize)]
            body += bigEndian(UInt64(objects.count), size: 8)
            body += bigEndian(0, size: 8)
            body += bigEndian(UInt64(tableOffset), size: 8)
            return body
        }

        func encodeObject(_ object: PropertyListValue, children: [Int], referenceSize: Int) -> [UInt8] {
            switch object {
            case .null: return [0x00]
            case .boolean(let value): return [value ? 0x09 : 0x08]
            case .integer(let value): return integer(value)
            case .real(let value): return [0x23] + bigEndian(value.bitPattern, size: 8)
            case .date(let value): return [0x33] + bigEndian(value.bitPattern, size: 8)
            case .data(let bytes): return header(0x4, bytes.count) + bytes
            case .string(let text):
                if text.utf8.allSatisfy({ $0 < 0x80 }) { return header(0x5, text.utf8.count) + Array(text.utf8) }
                let units = Array(text.utf16)
                return header(0x6, units.count) + units.flatMap { bigEndian(UInt64($0), size: 2) }
            case .uid(let value):
                let size = byteCount(UInt64(value))
                return [0x80 | UInt8(size - 1)] + bigEndian(UInt64(value), size: size)
            case .array:
                return header(0xA, children.count) + children.flatMap { bigEndian(UInt64($0), size: referenceSize) }
            case .dictionary:
                return header(0xD, children.count / 2) + children.flatMap { bigEndian(UInt64($0), size: referenceSize) }
            }
        }

        func integer(_ value: Int64) -> [UInt8] {
            if value < 0 { return [0x13] + bigEndian(UInt64(bitPattern: value), size: 8) }
            switch UInt64(value) {
            case 0...0xFF: return [0x10] + bigEndian(UInt64(value), size: 1)
            case 0x100...0xFFFF: return [0x11] + bigEndian(UInt64(value), size: 2)
            case 0x1_0000...0xFFFF_FFFF: return [0x12] + bigEndian(UInt64(value), size: 4)
            default: return [0x13] + bigEndian(UInt64(value), size: 8)
            }
        }

        func header(_ type: UInt8, _ count: Int) -> [UInt8] {
            if count < 15 { return [type << 4 | UInt8(count)] }
            return [type << 4 | 0x0F] + integer(Int64(count))
        }

        func byteCount(_ value: UInt64) -> Int {
            switch value {
            case 0...0xFF: 1
            case 0x100...0xFFFF: 2
            case 0x1_0000...0xFFFF_FFFF: 4
            default: 8
            }
        }

        func bigEndian(_ value: UInt64, size: Int) -> [UInt8] {
            (0..<size).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
        }
    }
}
