/// A decoder for Apple's binary property list format (`bplist00`).
///
/// Written for untrusted input: every offset and count is bounds-checked, nesting is limited, and a
/// container that contains itself is rejected. Format: the trailer's last 32 bytes give the offset size,
/// reference size, object count, top object and offset-table position; each object starts with a marker
/// byte whose high nibble is its type.
public enum BinaryPropertyList {
    /// Why decoding failed; the text says where.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// What was wrong.
        public var message: String
        public var description: String { message }
    }

    /// Containers may nest this deep at most.
    static let depthLimit = 512

    /// Decodes the property list in `bytes`.
    public static func decode(_ bytes: [UInt8]) throws(Failure) -> PropertyListValue {
        var parser = try Parser(bytes)
        return try parser.object(parser.topObject, depth: 0)
    }

    struct Parser {
        let bytes: [UInt8]
        let offsetSize: Int
        let referenceSize: Int
        let objectCount: Int
        let topObject: Int
        let offsetTable: Int
        var active: Set<Int> = []
        /// Objects already decoded: shared references reuse them instead of decoding (and copying) again.
        var decoded: [Int: PropertyListValue] = [:]
        /// Objects decoded so far: shared references could otherwise expand exponentially.
        var produced = 0
        var productionLimit: Int { max(objectCount * 64, 1 << 16) }

        init(_ bytes: [UInt8]) throws(Failure) {
            guard bytes.count >= 40, bytes[0..<8].elementsEqual("bplist00".utf8) else {
                throw Failure(message: "not a binary property list (no bplist00 header)")
            }
            self.bytes = bytes
            let trailer = bytes.count - 32
            offsetSize = Int(bytes[trailer + 6])
            referenceSize = Int(bytes[trailer + 7])
            let count = Self.bigEndian(bytes, trailer + 8, 8)
            let top = Self.bigEndian(bytes, trailer + 16, 8)
            let table = Self.bigEndian(bytes, trailer + 24, 8)
            guard (1...8).contains(offsetSize), (1...8).contains(referenceSize),
                count > 0, count < UInt64(bytes.count), top < count,
                table >= 8, table < UInt64(trailer), UInt64(trailer) - table >= count * UInt64(offsetSize)
            else { throw Failure(message: "binary property list trailer is inconsistent") }
            objectCount = Int(count)
            topObject = Int(top)
            offsetTable = Int(table)
        }

        static func bigEndian(_ bytes: [UInt8], _ start: Int, _ length: Int) -> UInt64 {
            var value: UInt64 = 0
            for index in start..<(start + length) { value = value << 8 | UInt64(bytes[index]) }
            return value
        }

        func read(_ start: Int, _ length: Int) throws(Failure) -> UInt64 {
            guard start >= 0, length >= 0, start <= bytes.count - length else {
                throw Failure(message: "binary property list: read past the end at offset \(start)")
            }
            return Self.bigEndian(bytes, start, length)
        }

        func offset(of object: Int) throws(Failure) -> Int {
            guard object >= 0, object < objectCount else {
                throw Failure(message: "binary property list: object reference \(object) out of range")
            }
            let value = try read(offsetTable + object * offsetSize, offsetSize)
            guard value >= 8, value < UInt64(offsetTable) else {
                throw Failure(message: "binary property list: object \(object) has offset \(value) outside the data")
            }
            return Int(value)
        }

        /// The length that follows a marker with low nibble `nibble` (0xF: an integer object follows).
        func length(_ nibble: UInt8, at position: Int) throws(Failure) -> (count: Int, start: Int) {
            if nibble != 0x0F { return (Int(nibble), position + 1) }
            let marker = try read(position + 1, 1)
            guard marker & 0xF0 == 0x10 else {
                throw Failure(message: "binary property list: bad length at \(position)")
            }
            let size = 1 << Int(marker & 0x0F)
            guard size <= 8 else { throw Failure(message: "binary property list: length too large at \(position)") }
            let count = try read(position + 2, size)
            guard count < UInt64(bytes.count) else {
                throw Failure(message: "binary property list: length \(count) too large")
            }
            return (Int(count), position + 2 + size)
        }

        mutating func object(_ reference: Int, depth: Int) throws(Failure) -> PropertyListValue {
            if let known = decoded[reference] { return known }
            let value = try decode(reference, depth: depth)
            decoded[reference] = value
            return value
        }

        mutating func decode(_ reference: Int, depth: Int) throws(Failure) -> PropertyListValue {
            guard depth < BinaryPropertyList.depthLimit else {
                throw Failure(message: "binary property list nests too deep")
            }
            produced += 1
            guard produced <= productionLimit else {
                throw Failure(
                    message: "binary property list: shared references expand beyond \(productionLimit) objects"
                )
            }
            let position = try offset(of: reference)
            let marker = UInt8(try read(position, 1))
            let nibble = marker & 0x0F
            switch marker >> 4 {
            case 0x0:
                switch marker {
                case 0x00: return .null
                case 0x08: return .boolean(false)
                case 0x09: return .boolean(true)
                default: throw Failure(message: "binary property list: unknown marker \(marker) at \(position)")
                }
            case 0x1:
                let size = 1 << Int(nibble)
                if size == 16 {  // 128-bit integers hold 64-bit values in their low half
                    return .integer(Int64(bitPattern: try read(position + 9, 8)))
                }
                guard size <= 8 else { throw Failure(message: "binary property list: integer too wide at \(position)") }
                let raw = try read(position + 1, size)
                return .integer(size == 8 ? Int64(bitPattern: raw) : Int64(raw))
            case 0x2:
                switch nibble {
                case 2: return .real(Double(Float(bitPattern: UInt32(try read(position + 1, 4)))))
                case 3: return .real(Double(bitPattern: try read(position + 1, 8)))
                default: throw Failure(message: "binary property list: bad real at \(position)")
                }
            case 0x3:
                guard marker == 0x33 else { throw Failure(message: "binary property list: bad date at \(position)") }
                return .date(Double(bitPattern: try read(position + 1, 8)))
            case 0x4:
                let (count, start) = try length(nibble, at: position)
                _ = try read(start, 0)
                guard start <= bytes.count - count else {
                    throw Failure(message: "binary property list: data past the end")
                }
                return .data(Array(bytes[start..<(start + count)]))
            case 0x5:
                let (count, start) = try length(nibble, at: position)
                guard start <= bytes.count - count else {
                    throw Failure(message: "binary property list: string past the end")
                }
                return .string(String(decoding: bytes[start..<(start + count)], as: UTF8.self))
            case 0x6:
                let (count, start) = try length(nibble, at: position)
                guard count <= (bytes.count - start) / 2 else {
                    throw Failure(message: "binary property list: string past the end")
                }
                var units: [UInt16] = []
                units.reserveCapacity(count)
                for index in 0..<count { units.append(UInt16(try read(start + 2 * index, 2))) }
                return .string(String(decoding: units, as: UTF16.self))
            case 0x8:
                guard let uid = Int(exactly: try read(position + 1, Int(nibble) + 1)) else {
                    throw Failure(message: "binary property list: UID out of range at \(position)")
                }
                return .uid(uid)
            case 0xA, 0xC:
                let (count, start) = try length(nibble, at: position)
                return .array(try children(count, at: start, of: reference, depth: depth))
            case 0xD:
                let (count, start) = try length(nibble, at: position)
                let keys = try children(count, at: start, of: reference, depth: depth)
                let values = try children(count, at: start + count * referenceSize, of: reference, depth: depth)
                var dictionary: [String: PropertyListValue] = [:]
                for (key, value) in zip(keys, values) {
                    guard let name = key.string else { throw Failure(message: "binary property list: non-string key") }
                    dictionary[name] = value
                }
                return .dictionary(dictionary)
            default:
                throw Failure(message: "binary property list: unknown marker \(marker) at \(position)")
            }
        }

        mutating func children(
            _ count: Int,
            at start: Int,
            of reference: Int,
            depth: Int
        ) throws(Failure) -> [PropertyListValue] {
            guard count <= (bytes.count - start) / referenceSize else {
                throw Failure(message: "binary property list: container past the end")
            }
            guard active.insert(reference).inserted else {
                throw Failure(message: "binary property list: object \(reference) contains itself")
            }
            defer { active.remove(reference) }
            var result: [PropertyListValue] = []
            result.reserveCapacity(count)
            for index in 0..<count {
                guard let child = Int(exactly: try read(start + index * referenceSize, referenceSize)) else {
                    throw Failure(message: "binary property list: object reference out of range")
                }
                result.append(try object(child, depth: depth + 1))
            }
            return result
        }
    }
}
