#if canImport(Glibc)
internal import Glibc
#endif

/// Writing to standard output and standard error without Foundation, retrying short writes and EINTR.
public enum StandardStreams {
    /// Writes `text` and a newline to standard output.
    public static func out(_ text: String) { write(text + "\n", to: STDOUT_FILENO) }

    /// Writes `text` to standard output, with a newline unless `newline` is false.
    public static func out(_ text: String, newline: Bool) { write(newline ? text + "\n" : text, to: STDOUT_FILENO) }

    /// Writes `text` and a newline to standard error.
    public static func error(_ text: String) { write(text + "\n", to: STDERR_FILENO) }

    /// Writes `text` to standard error without a newline (a question before reading the answer).
    public static func prompt(_ text: String) { write(text, to: STDERR_FILENO) }

    private static func write(_ text: String, to descriptor: Int32) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { buffer in
                Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            }
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { return }
            offset += written
        }
        bytes.removeAll()
    }
}
