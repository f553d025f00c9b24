/// Parsing typed values of configuration entries, with errors naming the entry.
extension ConfigEntry {
    /// A positive or zero duration: `250ms`, `5s`, `30m`, `2h`, `7d`, or plain seconds. In nanoseconds.
    public func duration() throws(ConfigError) -> UInt64 {
        let units: [(String, Double)] = [("ms", 1e6), ("s", 1e9), ("m", 60e9), ("h", 3600e9), ("d", 86_400e9)]
        var number = value
        var scale = 1e9
        for (suffix, factor) in units where value.hasSuffix(suffix) {
            let candidate = String(value.dropLast(suffix.count))
            if Double(candidate) != nil {
                number = candidate
                scale = factor
                break
            }
        }
        guard let amount = Double(number), amount >= 0, amount.isFinite, amount * scale < 1.8e19 else {
            throw ConfigError(self, "\(key) must be a duration such as 500ms, 5s, 30m, 2h or 7d, not \"\(value)\"")
        }
        return UInt64(amount * scale)
    }

    /// An integer within `range`.
    public func integer(in range: ClosedRange<Int>) throws(ConfigError) -> Int {
        guard let number = Int(value), range.contains(number) else {
            throw ConfigError(
                self,
                "\(key) must be an integer from \(range.lowerBound) to \(range.upperBound), not \"\(value)\""
            )
        }
        return number
    }

    /// An octal file mode such as `0660`.
    public func fileMode() throws(ConfigError) -> UInt32 {
        guard value.count >= 3, value.count <= 4, let mode = UInt32(value, radix: 8), mode <= 0o777 else {
            throw ConfigError(self, "\(key) must be an octal mode such as 0660, not \"\(value)\"")
        }
        return mode
    }

    /// One of `choices`.
    public func choice(_ choices: [String]) throws(ConfigError) -> String {
        guard choices.contains(value) else {
            throw ConfigError(self, "\(key) must be one of \(choices.joined(separator: ", ")), not \"\(value)\"")
        }
        return value
    }

    /// A non-empty value.
    public func nonEmpty() throws(ConfigError) -> String {
        guard !value.isEmpty else { throw ConfigError(self, "\(key) needs a value") }
        return value
    }

    /// A comma-separated list of non-negative integers (uids or gids).
    public func integerList() throws(ConfigError) -> [UInt32] {
        var result: [UInt32] = []
        for part in value.split(separator: ",") {
            guard let number = UInt32(part.trimmingCharacters(in: " ")) else {
                throw ConfigError(self, "\(key) must be a comma-separated list of numeric ids, not \"\(value)\"")
            }
            result.append(number)
        }
        return result
    }
}
