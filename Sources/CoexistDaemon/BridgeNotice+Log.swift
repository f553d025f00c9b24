import CoexistBridge
import CoexistRuntime

extension BridgeNotice {
    /// The journal fields of the notice.
    var logFields: [LogField: String] {
        var fields: [LogField: String] = [.event: kind.rawValue]
        if let token { fields[.token] = "\(token)" }
        if let side { fields[.side] = side.rawValue }
        if let entity { fields[.entity] = entity }
        if let object { fields[.object] = object }
        if let property { fields[.property] = property }
        return fields
    }
}

extension SyncEngine {
    /// Logs the bridge's notices as warnings with their fields; parked objects, which can come by the
    /// thousand, at most one line per 10 s.
    func reportNotices(to logger: Logger) {
        report = { notice in logger.warning(notice.message, fields: notice.logFields) }
        let parked = RateLimitedWarnings(logger: logger)
        reportParkedObject = { notice in parked.warn(notice.message, fields: notice.logFields) }
    }
}
