/// The broker's figures: coexistd publishing to JetStream, and the same events to many consumers through the
/// socket and through JetStream.
extension Report {
    mutating func publish(_ result: PublishScenario.Result) {
        rows.append(
            (
                "publish", "legacy commit → JetStream message (n \(result.latency.count), missing \(result.missing))",
                Self.distribution(result.latency)
            )
        )
        rows.append(
            (
                "publish",
                "legacy commit → stored, to a pull consumer (n \(result.stored.count), missing "
                    + "\(result.storedMissing))",
                Self.distribution(result.stored)
            )
        )
        let ratio = Double(Int(result.sustained / max(result.direct, 1) * 100)) / 100
        rows.append(
            (
                "publish", "sustained, \(result.changes) changes in 100-row transactions",
                "\(Int(result.sustained)) changes/s vs the client alone, acked one by one: \(Int(result.direct))/s "
                    + "(× \(ratio))"
            )
        )
        rows.append(
            (
                "publish",
                "legacy commit → pull consumer, \(result.pullRate) changes/s (n \(result.pull.count), missing "
                    + "\(result.pullMissing))",
                Self.distribution(result.pull)
            )
        )
        rows.append(
            (
                "publish",
                "legacy commit → JetStream message, same run (n \(result.pullAtServer.count))",
                Self.distribution(result.pullAtServer)
            )
        )
        fields.append(
            "\"publish\":{\"latency\":\(Self.json(result.latency)),\"missing\":\(result.missing),"
                + "\"stored\":\(Self.json(result.stored)),\"storedMissing\":\(result.storedMissing),"
                + "\"sustained\":\(Int(result.sustained)),\"direct\":\(Int(result.direct)),"
                + "\"pull\":\(Self.json(result.pull)),\"pullMissing\":\(result.pullMissing),"
                + "\"pullAtServer\":\(Self.json(result.pullAtServer))}"
        )
    }

    mutating func consumers(_ result: ConsumersScenario.Result) {
        var entries: [String] = []
        for (key, arm) in [("socket", result.socket), ("jetStream", result.jetStream)] {
            let parts = arm.parts.map { "\($0.0) \(Self.perEvent($0.1, arm.delivered))" }.joined(separator: " + ")
            rows.append(
                (
                    "consumers",
                    "\(result.consumers) consumers through \(arm.name), \(result.eventRate) events/s "
                        + "(\(result.events) events; n \(arm.delivery.count))",
                    Self.distribution(arm.delivery)
                        + (arm.delivered == arm.expected
                            ? "; all delivered" : "; \(arm.expected - arm.delivered) of \(arm.expected) MISSING")
                        + "; CPU \(Self.perEvent(arm.cpu, arm.delivered)) ns per delivered event (\(parts))"
                )
            )
            entries.append(
                "\"\(key)\":{\"delivered\":\(arm.delivered),\"expected\":\(arm.expected),"
                    + "\"delivery\":\(Self.json(arm.delivery)),\"cpuNanoseconds\":\(arm.cpu),"
                    + "\"cpuPerDeliveredEvent\":\(Self.perEvent(arm.cpu, arm.delivered))}"
            )
        }
        fields.append(
            "\"consumers\":{\"consumers\":\(result.consumers),\"eventRate\":\(result.eventRate),"
                + "\"events\":\(result.events)," + entries.joined(separator: ",") + "}"
        )
    }
}
