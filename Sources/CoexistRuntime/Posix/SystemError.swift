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

    /// Creates an error.
    public init(call: String, code: Int32, subject: String? = nil) {
        self.call = call
        self.code = code
        self.subject = subject
    }

    public var description: String {
        (subject.map { "\($0): " } ?? "") + "\(call) failed: \(String(cString: strerror(code)))"
    }
}
