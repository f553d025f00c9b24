import CoexistHistory

@testable import CoexistEvents

extension EncodedEvent {
    /// A Task insert of transaction `token` whose line is `size` bytes (`a`s), with a line with values of
    /// as many bytes (`b`s) when `values`.
    static func sample(_ token: Int64, size: Int = 100, values: Bool = true, resolved: Bool = true) -> EncodedEvent {
        EncodedEvent(
            token: token,
            entity: "Task",
            side: .legacy,
            author: nil,
            change: .insert,
            isMirror: false,
            plain: WireLine([UInt8](repeating: 0x61, count: size), token: token),
            withValues: values ? WireLine([UInt8](repeating: 0x62, count: size), token: token) : nil,
            resolved: resolved
        )
    }
}
