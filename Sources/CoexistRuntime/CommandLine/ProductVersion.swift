/// coexist's version, printed by both executables' `--version` and written into the manual pages.
public enum ProductVersion {
    /// The release (semantic versioning).
    public static let number = "0.9.0"

    /// How this binary was built: optimized or not, and the Swift language version.
    public static var build: String {
        #if DEBUG
        let mode = "debug build"
        #else
        let mode = "release build"
        #endif
        #if swift(>=6.3)
        let swift = "Swift 6.3"
        #else
        let swift = "Swift 6"
        #endif
        return "\(mode), \(swift), Linux"
    }

    /// The `--version` text of `tool`: `coexistd 0.9.0`, then the libraries it runs with and the build.
    public static func text(_ tool: String, libraries: [(String, String)]) -> String {
        let used = libraries.map { "\($0.0) \($0.1)" }.joined(separator: ", ")
        return "\(tool) \(number)\n" + (used.isEmpty ? "" : "\(used)\n") + build
    }

    /// The manual pages' source line: `coexist 0.9.0`.
    public static var manualSource: String { "coexist \(number)" }
}
