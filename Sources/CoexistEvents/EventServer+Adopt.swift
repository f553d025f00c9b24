import CoexistRuntime

extension EventServer {
    /// Takes over a connection accepted (and let through the allowlist) before the server existed, while
    /// coexistd started: `lines` are answered now as if just read, `partial` is the start of the next.
    public func adopt(descriptor: Int32, lines: [[UInt8]], partial: [UInt8], now: UInt64) {
        let client = makeClient(descriptor: descriptor, now: now)
        clients[descriptor] = client
        client.admit()
        client.input = partial
        client.inputSince = partial.isEmpty ? nil : now
        answer(lines, from: client, now: now)
        if client.closing && !client.wantsToWrite { client.closed = true }
        if client.closed { remove(client) }
    }
}
