public import CoexistModel
import FoundationEssentials

/// What a new-schema change set, as `coexist_change.vals` records it in the save's own transaction: the
/// object's values as of that commit, so that an event need not read them (later) from the tables.
///
/// An insert records every attribute and relationship; an update the changed ones, and what the changed
/// attributes and to-ones held before (``before``). A to-one is recorded
/// as its target's identity (`.string`, `.null` when unset); a to-many as its members' identities, in the
/// relationship's order when ordered (else in any order), or as their count beyond ``maxListedMembers``.
public struct RecordedValues: Codable, Sendable, Hashable {
    /// The most members a to-many's recorded value (and an event's) lists.
    public static let maxListedMembers = 1_000

    /// Attributes, and to-ones as their target's identity, by name.
    public var values: [String: AttributeValue]
    /// To-manys with at most ``maxListedMembers`` members: the members' identities.
    public var members: [String: [String]]
    /// To-manys with more members: how many.
    public var counts: [String: Int]
    /// An update's attributes and to-ones as they were before the save changed them (those the save read
    /// before writing them; nil when none).
    public var before: [String: AttributeValue]?

    /// Values to record.
    public init(
        values: [String: AttributeValue] = [:],
        members: [String: [String]] = [:],
        counts: [String: Int] = [:],
        before: [String: AttributeValue]? = nil
    ) {
        self.values = values
        self.members = members
        self.counts = counts
        self.before = before
    }

    /// The JSON `coexist_change.vals` holds (what `Codable` reads back), keys sorted, built directly: a save
    /// writes one per changed object.
    public var json: String {
        var output: [UInt8] = []
        output.reserveCapacity(64 + values.count * 48)
        func object<Value>(_ key: String, _ entries: [String: Value], _ write: (Value, inout [UInt8]) -> Void) {
            output += Array("\"\(key)\":{".utf8)
            for (index, name) in entries.keys.sorted().enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                JSONText.append(name, to: &output)
                output.append(UInt8(ascii: ":"))
                if let value = entries[name] { write(value, &output) }
            }
            output.append(UInt8(ascii: "}"))
        }
        output.append(UInt8(ascii: "{"))
        if let before {
            object("before", before) { value, output in value.appendTaggedJSON(to: &output) }
            output.append(UInt8(ascii: ","))
        }
        object("counts", counts) { count, output in output += Array(String(count).utf8) }
        output.append(UInt8(ascii: ","))
        object("members", members) { identities, output in
            output.append(UInt8(ascii: "["))
            for (index, identity) in identities.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                JSONText.append(identity, to: &output)
            }
            output.append(UInt8(ascii: "]"))
        }
        output.append(UInt8(ascii: ","))
        object("values", values) { value, output in value.appendTaggedJSON(to: &output) }
        output.append(UInt8(ascii: "}"))
        return String(decoding: output, as: UTF8.self)
    }
}

extension HistoryChange {
    /// What a new-schema change set, decoded from ``recordedValuesJSON`` (nil when not recorded, or when
    /// the text does not decode).
    public var recordedValues: RecordedValues? {
        recordedValuesJSON.flatMap { try? JSONDecoder().decode(RecordedValues.self, from: Data($0.utf8)) }
    }
}
