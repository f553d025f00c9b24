#if canImport(Glibc)
internal import Glibc
#endif

/// One `key = value` line of a configuration file, with where it came from.
public struct ConfigEntry: Sendable, Equatable {
    /// The section (`entity Task` for `[entity Task]`), nil before the first section.
    public var section: String?
    /// The key.
    public var key: String
    /// The value, trimmed.
    public var value: String
    /// Where the entry came from: a file path, or `command line`.
    public var file: String
    /// The line in the file (nil for the command line).
    public var line: Int?

    /// Creates an entry.
    public init(section: String? = nil, key: String, value: String, file: String, line: Int?) {
        self.section = section
        self.key = key
        self.value = value
        self.file = file
        self.line = line
    }

    /// `file:line` (or `command line: --key`), for messages.
    public var location: String {
        if let line { return "\(file):\(line)" }
        return "\(file): --\(key)"
    }
}

/// A configuration error: where, and what. Daemons exit with `EX_CONFIG` (78) on an invalid configuration
/// and `EX_NOINPUT` (66) when a file it names (the database, the model) does not exist or cannot be read.
public struct ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of configuration problem it is.
    public enum Kind: Sendable, Equatable {
        /// The configuration itself is wrong (syntax, key, value): `EX_CONFIG`.
        case invalid
        /// A file it names does not exist or cannot be read: `EX_NOINPUT`.
        case missingInput
    }

    /// `file:line`, or `command line: --key`, or a bare file path.
    public var location: String
    /// What is wrong.
    public var message: String
    /// What kind of problem.
    public var kind: Kind

    /// Creates an error.
    public init(location: String, message: String, kind: Kind = .invalid) {
        self.location = location
        self.message = message
        self.kind = kind
    }

    /// An error about `entry`.
    public init(_ entry: ConfigEntry, _ message: String) {
        location = entry.location
        self.message = message
        kind = .invalid
    }

    public var description: String { "\(location): \(message)" }
}

/// The configuration file format: `key = value` lines, `# comment` lines, blank lines, and `[section]`
/// headers (`[entity Task]`). Keys are lower-case words joined by `-` or `.`; values run to the end of the
/// line. Lines end with LF or CRLF; a UTF-8 byte order mark at the start is skipped. A key set twice in one
/// section, a carriage return or control character inside a line, and anything else that is not one of
/// these forms is an error naming the file and line: a file is never read in a way other than it reads.
public enum ConfigFile {
    /// The entries of the file at `path`.
    public static func read(path: String) throws(ConfigError) -> [ConfigEntry] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw ConfigError(
                location: path,
                message: "cannot open the configuration file: \(String(cString: strerror(errno)))"
            )
        }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else {
                throw ConfigError(
                    location: path,
                    message: "cannot read the configuration file: \(String(cString: strerror(errno)))"
                )
            }
            if count == 0 { break }
            bytes += buffer[0..<count]
            guard bytes.count <= 1 << 20 else {
                throw ConfigError(location: path, message: "the configuration file is larger than 1 MiB")
            }
        }
        return try parse(bytes: bytes, file: path)
    }

    /// The entries of the UTF-8 text `bytes`, attributed to `file`.
    public static func parse(bytes: [UInt8], file: String) throws(ConfigError) -> [ConfigEntry] {
        var lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
        if let first = lines.first, first.starts(with: [0xEF, 0xBB, 0xBF]) {
            lines[0] = first.dropFirst(3)
        }
        var texts: [String] = []
        for (offset, var line) in lines.enumerated() {
            if line.last == 0x0D { line = line.dropLast() }
            guard let text = String(validating: line, as: UTF8.self) else {
                throw ConfigError(location: "\(file):\(offset + 1)", message: "the line is not UTF-8 text")
            }
            texts.append(text)
        }
        return try parse(lines: texts, file: file)
    }

    /// The entries of `text`, attributed to `file`.
    public static func parse(_ text: String, file: String) throws(ConfigError) -> [ConfigEntry] {
        try parse(bytes: Array(text.utf8), file: file)
    }

    private static func parse(lines: [String], file: String) throws(ConfigError) -> [ConfigEntry] {
        var entries: [ConfigEntry] = []
        var section: String?
        var seen: [String: Int] = [:]  // "section\0key" → line
        for (offset, rawLine) in lines.enumerated() {
            let number = offset + 1
            let location = "\(file):\(number)"
            if let control = rawLine.unicodeScalars.first(where: { $0.value < 0x20 && $0 != "\t" || $0.value == 0x7F })
            {
                throw ConfigError(
                    location: location,
                    message: "the line holds a control character (U+\(hex(control.value))); lines end with LF or CRLF"
                )
            }
            let line = rawLine.trimmingCharacters(in: " \t")
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("[") {
                guard line.hasSuffix("]"), line.count > 2 else {
                    throw ConfigError(location: location, message: "a section header is written [name]")
                }
                section = String(line.dropFirst().dropLast()).trimmingCharacters(in: " \t")
                continue
            }
            guard let equals = line.firstIndex(of: "=") else {
                throw ConfigError(location: location, message: "expected key = value, found \"\(line)\"")
            }
            let key = String(line[..<equals]).trimmingCharacters(in: " \t")
            let value = String(line[line.index(after: equals)...]).trimmingCharacters(in: " \t")
            guard !key.isEmpty, key.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." || $0 == "_" })
            else {
                throw ConfigError(location: location, message: "invalid key \"\(key)\"")
            }
            let identity = (section ?? "") + "\u{0}" + key
            if let first = seen[identity] {
                throw ConfigError(
                    location: location,
                    message:
                        "\(key) is already set at line \(first)\(section.map { " in [\($0)]" } ?? ""): set a key once"
                )
            }
            seen[identity] = number
            entries.append(ConfigEntry(section: section, key: key, value: value, file: file, line: number))
        }
        return entries
    }

    private static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}

extension StringProtocol {
    func trimmingCharacters(in set: String) -> String {
        var slice = Substring(self)
        while let first = slice.first, set.contains(first) { slice = slice.dropFirst() }
        while let last = slice.last, set.contains(last) { slice = slice.dropLast() }
        return String(slice)
    }
}
