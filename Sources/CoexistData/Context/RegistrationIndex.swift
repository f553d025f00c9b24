import CoexistStore

extension ModelContext {
    /// A context's registrations by reference: each key keeps the hash of its identity, so a lookup compares
    /// whole keys only when their hashes agree (an identity map of many records otherwise compares the
    /// identity text of every key its probe passes, each a read of another heap object).
    struct RegistrationIndex {
        private struct Key: Hashable {
            let ref: ObjectRef
            let hash: Int

            init(_ ref: ObjectRef) {
                self.ref = ref
                hash = ref.hashValue
            }

            static func == (lhs: Key, rhs: Key) -> Bool { lhs.hash == rhs.hash && lhs.ref == rhs.ref }
            func hash(into hasher: inout Hasher) { hasher.combine(hash) }
        }

        private var table: [Key: Registration] = [:]

        /// The registration of `ref`.
        subscript(ref: ObjectRef) -> Registration? {
            get { table[Key(ref)] }
            set { table[Key(ref)] = newValue }
        }

        /// Whether it holds none.
        var isEmpty: Bool { table.isEmpty }

        /// How many it holds.
        var count: Int { table.count }

        /// Makes room for `capacity` registrations at once.
        mutating func reserveCapacity(_ capacity: Int) { table.reserveCapacity(capacity) }
    }
}
