#if canImport(Glibc)
internal import Glibc
#endif

/// A failed system call: its name and `errno`, with the C library's message.
public struct SystemError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The call that failed (`bind`, `inotify_add_watch`).
    public var call: String
    /// `errno`.
    public var code: Int32
    /// What the call was about (a path), when known.
    public var subject: String?
    /// A sentence saying more than `errno` does, when there is one.
    public var detail: String?

    /// Creates an error.
    public init(call: String, code: Int32, subject: String? = nil, detail: String? = nil) {
        self.call = call
        self.code = code
        self.subject = subject
        self.detail = detail
    }

    public var description: String {
        (subject.map { "\($0): " } ?? "") + "\(call) failed: "
            + (detail ?? String(cString: strerror(code)))
    }
}
