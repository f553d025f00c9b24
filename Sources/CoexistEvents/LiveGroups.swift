/// The live subscribers, grouped by filter set: a transaction's events are matched once per group, and a
/// group whose filters take none of them costs nothing more, however many subscribers it has.
///
/// Made again from the clients at the first page published after a subscription began, ended, went live or
/// changed (``ClientAttention/liveChanged``), never per transaction; emptied when a client is removed, so
/// that it holds none the server let go.
struct LiveGroups {
    struct Group {
        /// The filter set's number.
        var filter: Int
        var clients: [EventClient]
    }

    private(set) var groups: [Group] = []
    /// Whether a live subscriber wants values, the bridge's own changes; whether one is catching up.
    private(set) var wantValues = false
    private(set) var wantMirrors = false
    private(set) var catchingUp = false

    init() {}

    /// The groups of `clients`' live subscriptions, in the order of their filter sets' numbers.
    init(_ clients: some Sequence<EventClient>) {
        var byFilter: [Int: [EventClient]] = [:]
        for client in clients {
            guard let subscription = client.subscription else { continue }
            guard subscription.live else {
                catchingUp = true
                continue
            }
            byFilter[subscription.filter, default: []].append(client)
            wantValues = wantValues || subscription.values
            wantMirrors = wantMirrors || subscription.mirrors
        }
        groups = byFilter.keys.sorted().map { Group(filter: $0, clients: byFilter[$0] ?? []) }
    }

    var isEmpty: Bool { groups.isEmpty }
}
