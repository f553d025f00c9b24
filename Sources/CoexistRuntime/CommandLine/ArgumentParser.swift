/// A small command-line parser: positional arguments, `--flag`, `--option value` and `--option=value`.
///
/// Unknown options, missing values and an option or flag given twice (unless declared repeatable) are usage
/// errors (exit 64) that name the option: a command line never means something other than it says.
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
    ///   - options: options that take a value (`--model PATH`), each at most once.
    ///   - repeatable: options that take a value and may be given more than once (`--entity NAME`…).
    public init(
        _ arguments: [String],
        flags allowedFlags: Set<String>,
        options allowedOptions: Set<String>,
        repeatable: Set<String> = []
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
                guard flags.insert(name).inserted else { throw UsageError("--\(name) is given twice") }
            } else if allowedOptions.contains(name) || repeatable.contains(name) {
                guard repeatable.contains(name) || options[name] == nil else {
                    throw UsageError("--\(name) is given twice")
                }
                if let inlineValue {
                    options[name, default: []].append(inlineValue)
                } else {
                    guard index < arguments.count else { throw UsageError("--\(name) needs a value") }
                    options[name, default: []].append(arguments[index])
                    index += 1
                }
            } else {
                let known = Array(allowedFlags) + Array(allowedOptions) + Array(repeatable) + ["help"]
                let hint = TextWrap.suggestion(for: name, among: known.sorted()).map { " (did you mean --\($0)?)" }
                throw UsageError("unknown option --\(name)" + (hint ?? ""))
            }
        }
    }

    /// Parses `arguments` by the option table of `spec`.
    public init(_ arguments: [String], spec: CommandSpec) throws(UsageError) {
        var flags: Set<String> = []
        var options: Set<String> = []
        var repeatable: Set<String> = []
        for option in spec.options {
            switch option.kind {
            case .flag: flags.insert(option.name)
            case .value: options.insert(option.name)
            case .repeatable: repeatable.insert(option.name)
            }
        }
        try self.init(arguments, flags: flags, options: options, repeatable: repeatable)
    }

    /// Whether `--name` was given.
    public func flag(_ name: String) -> Bool { flags.contains(name) }

    /// The value of `--name`, or nil (the last one of a repeatable option).
    public func option(_ name: String) -> String? { options[name]?.last }

    /// The integer value of `--name` within `range`, or `fallback` when it is absent; any other text is a
    /// usage error naming the option and the range.
    public func integer(_ name: String, in range: ClosedRange<Int>, default fallback: Int) throws(UsageError) -> Int {
        guard let text = option(name) else { return fallback }
        guard let value = Int(text), range.contains(value) else {
            let upper = range.upperBound == Int.max ? "" : " to \(range.upperBound)"
            throw UsageError("--\(name) is an integer from \(range.lowerBound)\(upper), not \"\(text)\"")
        }
        return value
    }

    /// Refuses an option given that `allowed` does not name: for one verb of a command whose verbs share
    /// an option table (`history list` takes none of `history prune`'s options); `context` names the verb.
    public func requireOnly(_ allowed: Set<String>, for context: String) throws(UsageError) {
        guard let stray = Set(options.keys).union(flags).subtracting(allowed).sorted().first else { return }
        throw UsageError("\(context) does not take --\(stray)")
    }

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
