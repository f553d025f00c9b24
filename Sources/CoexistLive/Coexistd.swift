import CoexistProtocol
import CoexistRuntime
import Foundation

/// What an app asks coexistd directly.
public enum Coexistd {
    /// Returns once coexistd has mirrored every transaction through `token` into the other schema
    /// (read-your-writes across the two stacks: save on one side, wait, then the other side's contexts see
    /// it); returns coexistd's cursor then. Throws ``LiveError/notMirrored(token:cursor:)`` when `timeout`
    /// passes first, ``LiveError/daemon(socket:detail:)`` when coexistd cannot be asked.
    @discardableResult
    public static func waitUntilMirrored(
        through token: Int64,
        socket: String,
        timeout: Duration = .seconds(10)
    ) throws(LiveError) -> Int64 {
        // Whole seconds first (at most 600), so that no duration overflows the arithmetic.
        let seconds = min(max(timeout.components.seconds, 0), 600)
        let milliseconds = max(
            0,
            min(seconds * 1_000 + timeout.components.attoseconds / 1_000_000_000_000_000, 600_000)
        )
        let client: LineClient
        do {
            client = try LineClient(path: socket, timeout: 2)
            try client.setReadTimeout(seconds: Double(milliseconds) / 1_000 + 5)
            try client.send(EventRequest("wait", token: max(0, token), timeout: Int(milliseconds)).text)
        } catch {
            throw .daemon(socket: socket, detail: "\(error)")
        }
        guard let reply = try DaemonSubscription.read(client, socket) else {
            throw .daemon(socket: socket, detail: "no reply to wait")
        }
        switch reply.type {
        case "waited": return reply.cursor ?? token
        case "error" where reply.code == "timeout": throw .notMirrored(token: token, cursor: reply.cursor)
        default: throw .daemon(socket: socket, detail: reply.message ?? reply.code ?? reply.type)
        }
    }
}
