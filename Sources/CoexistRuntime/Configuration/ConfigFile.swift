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

/// A configuration error: where, and what. Daemons exit with `EX_CONFIG` (78) on it.
public struct ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `file:line`, or `command line: --key`, or a bare file path.
    public var location: String
    /// What is wrong.
    public var message: String

    /// Creates an error.
    public init(location: String, message: String) {
        self.location = location
        self.message = message
    }

    /// An error about `entry`.
    public init(_ entry: ConfigEntry, _ message: String) {
        location = entry.location
        self.message = message
    }

    public var description: String { "\(location): \(message)" }
}

/// The configuration file format: `key = value` lines, `# comment` lines, blank lines, and `[section]`
/// headers (`[entity Task]`). Keys are lower-case words joined by `-` or `.`; values run to the end of the
/// line. Anything else is an error naming the file and line.
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
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ConfigError(location: path, message: "the configuration file is not UTF-8 text")
        }
        return try parse(text, file: path)
    }

    /// The entries of `text`, attributed to `file`.
    public static func parse(_ text: String, file: String) throws(ConfigError) -> [ConfigEntry] {
        var entries: [ConfigEntry] = []
        var section: String?
        for (offset, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = offset + 1
            let line = rawLine.trimmingCharacters(in: " \t\r")
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("[") {
                guard line.hasSuffix("]"), line.count > 2 else {
                    throw ConfigError(location: "\(file):\(number)", message: "a section header is written [name]")
                }
                section = String(line.dropFirst().dropLast()).trimmingCharacters(in: " \t")
                continue
            }
            guard let equals = line.firstIndex(of: "=") else {
                throw ConfigError(location: "\(file):\(number)", message: "expected key = value, found \"\(line)\"")
            }
            let key = String(line[..<equals]).trimmingCharacters(in: " \t")
            let value = String(line[line.index(after: equals)...]).trimmingCharacters(in: " \t")
            guard !key.isEmpty, key.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." || $0 == "_" })
            else {
                throw ConfigError(location: "\(file):\(number)", message: "invalid key \"\(key)\"")
            }
            entries.append(ConfigEntry(section: section, key: key, value: value, file: file, line: number))
        }
        return entries
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
