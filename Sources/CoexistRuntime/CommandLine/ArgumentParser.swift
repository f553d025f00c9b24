/// A small command-line parser: positional arguments, `--flag`, `--option value` and `--option=value`.
///
/// Unknown options and missing values are usage errors (exit 64) that name the option.
public struct ArgumentParser: Sendable {
    /// A usage error, to be printed with the command's help line.
    public struct UsageError: Error, Sendable, CustomStringConvertible {
        /// What was wrong with the command line.
        public var message: String
        /// Creates an error.
        public init(_ message: String) { self.message = message }
        public var description: String { message }
    }

    /// Positional arguments, in order.
    public private(set) var positionals: [String] = []
    private var options: [String: [String]] = [:]
    private var flags: Set<String> = []

    /// Parses `arguments` (without the program and subcommand names).
    ///
    /// - Parameters:
    ///   - flags: options that take no value (`--json`).
    ///   - options: options that take a value (`--model PATH`); they may repeat.
    public init(
        _ arguments: [String],
        flags allowedFlags: Set<String>,
        options allowedOptions: Set<String>
    ) throws(UsageError) {
        var index = 0
        var onlyPositionals = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositionals || !argument.hasPrefix("--") || argument == "-" {
                positionals.append(argument)
                continue
            }
            if argument == "--" {
                onlyPositionals = true
                continue
            }
            var name = String(argument.dropFirst(2))
            var inlineValue: String?
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if allowedFlags.contains(name) {
                guard inlineValue == nil else { throw UsageError("--\(name) takes no value") }
                flags.insert(name)
            } else if allowedOptions.contains(name) {
                if let inlineValue {
                    options[name, default: []].append(inlineValue)
                } else {
                    guard index < arguments.count else { throw UsageError("--\(name) needs a value") }
                    options[name, default: []].append(arguments[index])
                    index += 1
                }
            } else {
                throw UsageError("unknown option --\(name)")
            }
        }
    }

    /// Whether `--name` was given.
    public func flag(_ name: String) -> Bool { flags.contains(name) }

    /// The last value of `--name`, or nil.
    public func option(_ name: String) -> String? { options[name]?.last }

    /// Every value of a repeatable `--name`.
    public func values(_ name: String) -> [String] { options[name] ?? [] }

    /// The positional arguments, requiring between `minimum` and `maximum` of them.
    public func positionals(min minimum: Int, max maximum: Int) throws(UsageError) -> [String] {
        guard positionals.count >= minimum else { throw UsageError("missing argument") }
        guard positionals.count <= maximum else {
            throw UsageError("unexpected argument \(positionals[maximum])")
        }
        return positionals
    }
}
