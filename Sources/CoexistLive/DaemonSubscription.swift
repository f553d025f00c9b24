import CoexistProtocol
import CoexistRuntime
import Foundation

/// One subscription to coexistd's event socket, read by one thread: it reports the token of each
/// transaction once its last change has arrived.
final class DaemonSubscription: @unchecked Sendable {
    let socket: String
    private let client: LineClient

    /// Connects and subscribes from now on, mirrors included; returns once coexistd confirmed.
    init(socket: String, sides: Set<String>?) throws(LiveError) {
        self.socket = socket
        let request = EventRequest("subscribe", since: .now, sides: sides.map { $0.sorted() }, mirrors: true)
        do {
            client = try LineClient(path: socket, timeout: 2)
            try client.setReadTimeout(seconds: 5)
            try client.send(request.text)
        } catch {
            throw .daemon(socket: socket, detail: "\(error)")
        }
        let reply = try Self.read(client, socket)
        guard reply?.type == "subscribed" else {
            throw .daemon(socket: socket, detail: "no subscription: \(reply?.message ?? reply?.type ?? "no reply")")
        }
        do {
            try client.setReadTimeout(seconds: 0.1)
        } catch {
            throw .daemon(socket: socket, detail: "\(error)")
        }
    }

    /// The next message, nil at the end of the stream; a read that times out is `EAGAIN`.
    static func read(_ client: LineClient, _ socket: String) throws(LiveError) -> ServerMessage? {
        let line: String?
        do {
            line = try client.readLine()
        } catch {
            throw .daemon(socket: socket, detail: "\(error)")
        }
        guard let line else { return nil }
        return try decode(line, socket)
    }

    /// One message line, decoded.
    static func decode(_ line: String, _ socket: String) throws(LiveError) -> ServerMessage {
        guard let message = ServerMessage.decode(line) else {
            throw .daemon(socket: socket, detail: "an unreadable message: \(line.prefix(200))")
        }
        return message
    }

    /// The token of the next complete transaction; nil once `isStopped` says so.
    func nextTransaction(isStopped: () -> Bool) throws(LiveError) -> Int64? {
        while !isStopped() {
            let line: String?
            do {
                line = try client.readLine()
            } catch let error where error.code == EAGAIN || error.code == EWOULDBLOCK || error.code == EINTR {
                continue  // the read timed out: look at the stop flag again
            } catch {
                throw .ended(socket: socket, reason: "\(error)")
            }
            guard let line else { throw .ended(socket: socket, reason: "the connection closed") }
            let message = try Self.decode(line, socket)
            switch message.type {
            case "event":
                // One signal per transaction: its last change.
                if let token = message.token, (message.index ?? 0) + 1 >= (message.count ?? 1) { return token }
            case "error", "lagged", "shutdown":
                throw .ended(socket: socket, reason: message.message ?? message.code ?? message.type)
            default:
                continue
            }
        }
        return nil
    }
}
