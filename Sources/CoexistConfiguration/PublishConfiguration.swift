#if canImport(Glibc)
internal import Glibc
#endif

/// The `[publish]` section: coexistd publishes every change to a NATS JetStream stream. Off unless `nats-url`
/// is set. These keys are read from the file only (servers and credentials are no command-line matter), and
/// a change to them takes effect at the next start.
public struct PublishConfiguration: Sendable, Equatable {
    /// How changes become messages.
    public enum Framing: String, Sendable, CaseIterable {
        /// One message per change: the socket protocol's event.
        case event
        /// One message per transaction: the socket protocol's `"framing":"transaction"` message.
        case transaction
    }

    /// The servers (`nats://host:port`), tried in turn; empty: publishing is off.
    public var servers: [String] = []
    /// The JetStream stream, created when absent.
    public var stream = "coexist"
    /// The subject template: `.`-separated tokens, where `{store}`, `{entity}`, `{change}` and `{side}` stand
    /// for the store's UUID, the entity, the change (insert, update, delete) and the side (legacy, new).
    public var subject = "coexist.{store}.{entity}.{change}"
    /// Replicas of a stream coexistd creates (1 to 5).
    public var replicas = 1
    /// The stream's duplicate window (nanoseconds): a re-published change within it is dropped by the server.
    public var duplicateWindow: UInt64 = 120_000_000_000
    public var framing: Framing = .event
    /// Messages carry the objects' values.
    public var values = false
    /// The bridge's own mirror transactions are published too (each change then appears once per side).
    public var mirrors = false
    /// A NATS credentials file (JWT and seed), nil: none.
    public var credentials: String?
    /// TLS: the CA certificates to trust, and the client's certificate chain and key (nil: none).
    public var tlsCA: String?
    public var tlsCertificate: String?
    public var tlsKey: String?
    /// How long a connection attempt or a publish acknowledgement may take (nanoseconds).
    public var timeout: UInt64 = 5_000_000_000
    /// Where each key was set (`file:line`), by key.
    public var locations: [String: String] = [:]

    /// Creates the defaults (publishing off).
    public init() {}

    /// Whether coexistd publishes.
    public var isEnabled: Bool { !servers.isEmpty }

    /// The placeholders a subject template may use.
    public static let placeholders = ["store", "entity", "change", "side"]

    /// `url` without a password (`nats://user:secret@host` → `nats://user:***@host`), for messages.
    public static func redacted(_ url: String) -> String {
        guard let at = url.lastIndex(of: "@"), let scheme = url.firstRange(of: "://"),
            let colon = url[scheme.upperBound..<at].firstIndex(of: ":")
        else { return url }
        return String(url[..<url.index(after: colon)]) + "***" + String(url[at...])
    }

    /// Where `key` was set, or the section for a default.
    public func location(_ key: String) -> String { locations[key] ?? locations["nats-url"] ?? "[publish]" }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        var left = lhs
        var right = rhs
        left.locations = [:]
        right.locations = [:]
        return left.comparable == right.comparable
    }

    private var comparable: [String] {
        [
            servers.joined(separator: ","), stream, subject, "\(replicas)", "\(duplicateWindow)", framing.rawValue,
            "\(values)", "\(mirrors)", credentials ?? "", tlsCA ?? "", tlsCertificate ?? "", tlsKey ?? "",
            "\(timeout)",
        ]
    }

    /// One key of the section: its name, documentation and how it is applied.
    public struct Key: Sendable {
        public let name: String
        public let doc: String
        let apply: @Sendable (inout PublishConfiguration, ConfigEntry) throws(ConfigError) -> Void
    }

    /// Every key of `[publish]`, in the order of `config/coexistd.conf`.
    public static let keys: [Key] = [
        Key(name: "nats-url", doc: "the NATS servers, comma-separated (nats://host:port); empty: off") {
            configuration,
            entry throws(ConfigError) in
            configuration.servers = try entry.servers()
        },
        Key(name: "stream", doc: "the JetStream stream, created when absent") {
            configuration,
            entry throws(ConfigError) in
            configuration.stream = try entry.streamName()
        },
        Key(name: "subject", doc: "the subject template") { configuration, entry throws(ConfigError) in
            configuration.subject = try entry.subjectTemplate()
        },
        Key(name: "replicas", doc: "replicas of a stream coexistd creates") {
            configuration,
            entry throws(ConfigError) in
            configuration.replicas = try entry.integer(in: 1...5)
        },
        Key(name: "duplicate-window", doc: "the stream's duplicate window") {
            configuration,
            entry throws(ConfigError) in
            let window = try entry.duration()
            // At most ten years: the window's nanoseconds, sent to the server as whole seconds times 10⁹, then
            // fit its signed 64-bit field (a longer one overflowed).
            guard (1_000_000_000...315_360_000_000_000_000).contains(window) else {
                throw ConfigError(entry, "the duplicate window is between 1s and 3650d")
            }
            configuration.duplicateWindow = window
        },
        Key(name: "framing", doc: "event or transaction") { configuration, entry throws(ConfigError) in
            configuration.framing = Framing(rawValue: try entry.choice(Framing.allCases.map(\.rawValue))) ?? .event
        },
        Key(name: "values", doc: "messages carry the objects' values") { configuration, entry throws(ConfigError) in
            configuration.values = try entry.choice(["true", "false"]) == "true"
        },
        Key(name: "mirrors", doc: "the bridge's mirror transactions are published too") {
            configuration,
            entry throws(ConfigError) in
            configuration.mirrors = try entry.choice(["true", "false"]) == "true"
        },
        Key(name: "credentials", doc: "a NATS credentials file") { configuration, entry throws(ConfigError) in
            configuration.credentials = entry.value.isEmpty ? nil : entry.value
        },
        Key(name: "tls-ca", doc: "CA certificates to trust (PEM)") { configuration, entry throws(ConfigError) in
            configuration.tlsCA = entry.value.isEmpty ? nil : entry.value
        },
        Key(name: "tls-certificate", doc: "the client's certificate chain (PEM)") {
            configuration,
            entry throws(ConfigError) in
            configuration.tlsCertificate = entry.value.isEmpty ? nil : entry.value
        },
        Key(name: "tls-key", doc: "the client's private key (PEM)") { configuration, entry throws(ConfigError) in
            configuration.tlsKey = entry.value.isEmpty ? nil : entry.value
        },
        Key(name: "timeout", doc: "connection and acknowledgement timeout") {
            configuration,
            entry throws(ConfigError) in
            let timeout = try entry.duration()
            guard (100_000_000...60_000_000_000).contains(timeout) else {
                throw ConfigError(entry, "the timeout is between 100ms and 60s")
            }
            configuration.timeout = timeout
        },
    ]

    static let keysByName = Dictionary(uniqueKeysWithValues: keys.map { ($0.name, $0) })

    /// Applies one entry of the `[publish]` section.
    mutating func apply(_ entry: ConfigEntry) throws(ConfigError) {
        guard let key = Self.keysByName[entry.key] else {
            throw ConfigError(
                entry,
                "unknown key \"\(entry.key)\" in [publish] (\(Self.keys.map(\.name).joined(separator: ", ")))"
            )
        }
        try key.apply(&self, entry)
        locations[entry.key] = entry.location
    }

    /// Checks what single keys cannot: a client certificate needs its key, and the reverse.
    func validate() throws(ConfigError) {
        guard isEnabled else { return }
        if (tlsCertificate == nil) != (tlsKey == nil) {
            throw ConfigError(
                location: location(tlsCertificate == nil ? "tls-key" : "tls-certificate"),
                message: "tls-certificate and tls-key are given together"
            )
        }
        for (key, path) in [("credentials", credentials), ("tls-ca", tlsCA), ("tls-certificate", tlsCertificate)]
        where path != nil {
            guard let path, access(path, R_OK) == 0 else {
                throw ConfigError(
                    location: location(key),
                    message: "\(path ?? ""): cannot be read",
                    kind: .missingInput
                )
            }
        }
        if let tlsKey, access(tlsKey, R_OK) != 0 {
            throw ConfigError(location: location("tls-key"), message: "\(tlsKey): cannot be read", kind: .missingInput)
        }
    }
}

extension ConfigEntry {
    /// A comma-separated list of `nats://` (or `tls://`) server URLs; empty: none.
    func servers() throws(ConfigError) -> [String] {
        let urls = value.split(separator: ",").map { $0.trimmingCharacters(in: " \t") }.filter { !$0.isEmpty }
        for url in urls {
            let rest = url.drop { $0 != "/" }.dropFirst(2)
            guard url.hasPrefix("nats://") || url.hasPrefix("tls://"), !rest.isEmpty,
                !url.contains(where: { $0 == " " || $0.isNewline })
            else {
                throw ConfigError(
                    self,
                    "\(String(reflecting: PublishConfiguration.redacted(url))) is not a nats:// or tls:// URL"
                )
            }
        }
        return urls
    }

    /// A JetStream stream name: letters, digits, `-` and `_`, at most 64 bytes.
    func streamName() throws(ConfigError) -> String {
        guard !value.isEmpty, value.utf8.count <= 64, value.utf8.allSatisfy({ Self.isNameByte($0) }) else {
            throw ConfigError(self, "a stream name is 1 to 64 letters, digits, - or _")
        }
        return value
    }

    /// A subject template: tokens separated by `.`, each a placeholder, a name (letters, digits, `-`, `_`)
    /// or a mix of them, never a wildcard; the first a name (the stream's subjects never take another
    /// application's, such as `$JS.API` or `_INBOX`), and one `{store}` alone (a restart finds the store's own
    /// last message by it, whoever else publishes to the stream).
    func subjectTemplate() throws(ConfigError) -> String {
        guard !value.isEmpty, value.utf8.count <= 255 else { throw ConfigError(self, "a subject has 1 to 255 bytes") }
        let tokens = value.split(separator: ".", omittingEmptySubsequences: false)
        guard let first = tokens.first, !first.contains("{") else {
            throw ConfigError(self, "\(String(reflecting: value)): the first token is a name, not a placeholder")
        }
        guard tokens.filter({ $0 == "{store}" }).count == 1, value.components(separatedBy: "{store}").count == 2 else {
            throw ConfigError(self, "\(String(reflecting: value)): one token is {store}, alone")
        }
        for token in value.split(separator: ".", omittingEmptySubsequences: false) {
            var rest = Substring(token)
            guard !rest.isEmpty else { throw ConfigError(self, "\(String(reflecting: value)) has an empty token") }
            while let open = rest.firstIndex(of: "{") {
                guard rest[..<open].utf8.allSatisfy({ Self.isNameByte($0) }),
                    let close = rest[open...].firstIndex(of: "}")
                else { throw ConfigError(self, "\(String(reflecting: value)): a placeholder is {name}") }
                let name = String(rest[rest.index(after: open)..<close])
                guard PublishConfiguration.placeholders.contains(name) else {
                    throw ConfigError(
                        self,
                        "unknown placeholder {\(name)} (\(PublishConfiguration.placeholders.map { "{\($0)}" }.joined(separator: ", ")))"
                    )
                }
                rest = rest[rest.index(after: close)...]
            }
            guard rest.utf8.allSatisfy({ Self.isNameByte($0) }) else {
                throw ConfigError(
                    self,
                    "\(String(reflecting: value)): a token holds letters, digits, -, _ and placeholders"
                )
            }
        }
        return value
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
    }
}
