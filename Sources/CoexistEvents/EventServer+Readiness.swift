import CoexistRuntime

#if canImport(Glibc)
public import Glibc
#endif

/// Readiness: the listener and every client are registered in one epoll set, for what each waits for now,
/// so that a wake-up costs what is ready and not the number of connections.
extension EventServer {
    /// The listener's key in ``readiness`` (a client's is its serial number and descriptor, never this).
    static let listenerKey = UInt64.max

    /// A client's key in ``readiness``: its serial number above its descriptor.
    static func key(of client: EventClient) -> UInt64 {
        UInt64(client.serial) << 32 | UInt64(UInt32(bitPattern: client.descriptor))
    }

    /// A new client on `descriptor`, with the next serial number (not yet registered).
    func makeClient(descriptor: Int32, now: UInt64) -> EventClient {
        lastSerial &+= 1
        // Never the listener's key: serial 0xFFFFFFFF with descriptor -1 cannot be accepted, but stay clear.
        if lastSerial == .max { lastSerial = 0 }
        let client = EventClient(descriptor: descriptor, now: now, account: account, attention: attention)
        client.serial = lastSerial
        return client
    }

    /// What to poll: the one descriptor of the server's epoll set, after every registration is brought up
    /// to date: the listener (unless accepting is paused) and each client, for reading (unless it waits for
    /// its ack to be durable: the kernel holds what it sends) and for writing while it has queued output.
    public func descriptors(now: UInt64) -> [pollfd] {
        syncReadiness(now: now)
        return [pollfd(fd: readiness.descriptor, events: Int16(POLLIN), revents: 0)]
    }

    /// Registers the listener, and each client that noted a change, for what it waits for now; a client that
    /// cannot be registered is closed (it could never be served), the listener is tried again after a pause.
    func syncReadiness(now: UInt64) {
        let listening = now >= acceptPausedUntil ? Int16(POLLIN) : 0
        if listening != listenerInterest {
            do {
                try register(listener.descriptor, from: listenerInterest, to: listening, key: Self.listenerKey)
                listenerInterest = listening
            } catch {
                acceptPausedUntil = now + 100_000_000
                logger.warning("cannot wait for connections (\(error)): retrying in 100 ms")
            }
        }
        var unregistrable: [EventClient] = []
        // Only the clients that noted a change: a wake-up does not go over every connection.
        for client in attention.takeReadiness() {
            // A client refused at once, or removed since, is not the server's to register.
            guard clients[client.descriptor] === client else { continue }
            let wanted = client.wantedInterest
            guard wanted != client.interest else { continue }
            do {
                try register(client.descriptor, from: client.interest, to: wanted, key: Self.key(of: client))
                client.interest = wanted
            } catch {
                logger.warning(
                    "closed a connection that cannot be polled: \(error)",
                    fields: client.logFields(event: "closed")
                )
                unregistrable.append(client)
            }
        }
        for client in unregistrable {
            client.dropUnsent()
            unsubscribe(client)
            client.closing = true
            client.closed = true
            remove(client)
        }
    }

    /// Takes a client out of ``readiness`` (before its descriptor is closed).
    func unregister(_ client: EventClient) {
        guard client.interest != 0 else { return }
        readiness.remove(client.descriptor)
        client.interest = 0
        registrations -= 1
    }

    /// Adds, changes or removes (`to` 0) the registration of `fd`, which is `from` (0: none).
    private func register(_ fd: Int32, from: Int16, to wanted: Int16, key: UInt64) throws(SystemError) {
        if wanted == 0 {
            readiness.remove(fd)
            registrations -= 1
        } else if from == 0 {
            try readiness.add(fd, events: wanted, key: key)
            registrations += 1
        } else {
            try readiness.modify(fd, events: wanted, key: key)
        }
    }
}
