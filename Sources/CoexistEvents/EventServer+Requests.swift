import CoexistHistory
import CoexistProtocol

/// The requests of the protocol, answered one by one (replies carry the request's id).
extension EventServer {
    /// Answers one request line.
    func respond(_ client: EventClient, _ line: [UInt8], now: UInt64) {
        let request: EventRequest
        switch EventRequest.decode(line) {
        case .success(let decoded): request = decoded
        case .failure(let error):
            let outer = replyingTo
            replyingTo = EventRequest.salvagedID(line).map { (ObjectIdentifier(client), $0) }
            fail(client, error)
            replyingTo = outer
            return
        }
        let outer = replyingTo
        replyingTo = request.id.map { (ObjectIdentifier(client), $0) }
        defer { replyingTo = outer }
        do {
            switch request.op {
            case "ping":
                reply(
                    client,
                    JSONWriter.message([
                        "type": "pong", "token": .integer(published), "protocol": .integer(Self.protocolVersion),
                    ])
                )
            case "unsubscribe":
                guard let subscription = client.subscription else {
                    fail(client, EventError(code: .notSubscribed, message: "unsubscribe needs a subscription"))
                    return
                }
                // What is queued still goes out; nothing after it. A durable consumer keeps its position.
                unsubscribe(client)
                reply(
                    client,
                    JSONWriter.message(["type": "unsubscribed", "token": .integer(position(of: subscription))])
                )
            case "status":
                reply(client, try statusLine())
            case "subscribe":
                try subscribe(client, request)
            case "ack":
                guard let name = client.subscription?.name else {
                    fail(client, EventError(code: .notSubscribed, message: "ack needs a subscription with a name"))
                    return
                }
                guard let token = request.token, token >= 0 else {
                    fail(client, EventError(code: .invalidRequest, message: "ack needs a token (a number ≥ 0)"))
                    return
                }
                // Only what was published can have been received: a token beyond it would hold nothing
                // back and skip events the consumer never saw.
                guard token <= published else {
                    fail(
                        client,
                        EventError(
                            code: .invalidRequest,
                            message: "token \(token) is beyond the last published token \(published)"
                        )
                    )
                    return
                }
                // Answered once the position is in the database (``releaseDurableAcks(now:)``).
                client.awaitingAck = (
                    consumers.post(name: name, token: token, at: TransactionWriter.now()),
                    tagged(
                        JSONWriter.message(["type": "acked", "name": .string(name), "token": .integer(token)]),
                        request.id
                    )
                )
            case "migrate":
                try migrate(client, to: request.to)
            case "wait":
                guard let token = request.token, token >= 0 else {
                    fail(client, EventError(code: .invalidRequest, message: "wait needs a token (a number ≥ 0)"))
                    return
                }
                if let timeout = request.timeout, timeout < 0 || timeout > 600_000 {
                    fail(client, EventError(code: .invalidRequest, message: "timeout is 0 to 600000 milliseconds"))
                    return
                }
                if token <= knownCursor {
                    reply(client, waited(token, cursor: knownCursor))
                    return
                }
                guard waits.count(client: client.descriptor) < limits.maxPendingRequests else {
                    overBudget(client, "more than \(limits.maxPendingRequests) wait requests are pending")
                    return
                }
                let timeout = UInt64(request.timeout ?? 10_000) * 1_000_000
                waits.add(client: client.descriptor, token: token, deadline: now + timeout, requestID: request.id)
            default:
                fail(client, EventError(code: .unknownOp, message: "unknown op \"\(request.op)\""))
            }
        } catch let error as EventError {
            fail(client, error)
        } catch {
            fail(client, EventError(code: .internalError, message: "\(error)"))
        }
    }
}
