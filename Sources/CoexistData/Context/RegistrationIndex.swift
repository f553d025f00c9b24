import CoexistStore

extension ModelContext {
    /// A context's registrations by reference: the identity map a fetch looks each row up in (one lookup
    /// gives the registration, not an object identity to look up again).
    struct RegistrationIndex {
        private var table: [ObjectRef: Registration] = [:]

        /// The registration of `ref`.
        subscript(ref: ObjectRef) -> Registration? {
            get { table[ref] }
            set { table[ref] = newValue }
        }

        /// Whether it holds none.
        var isEmpty: Bool { table.isEmpty }

        /// How many it holds.
        var count: Int { table.count }

        /// Makes room for `capacity` registrations at once.
        mutating func reserveCapacity(_ capacity: Int) { table.reserveCapacity(capacity) }
    }
}
