import Storage

/// How a write transaction learns the realm's active signing key: from `ActiveKeyMemory` when
/// the caller confirms in this transaction the settings stamp the key was remembered under,
/// else by one statement the caller sends with its first reads (`SQLExecutor.queryBatch`).
///
/// The statement must follow the stamp's read in the same batch: under READ COMMITTED each
/// statement may see later commits, never earlier ones, so the key read is never older than
/// the stamp it is remembered under.
public struct ActiveKeyLookup: Sendable {
    let realmID: String
    /// The stamp the caller confirms in its transaction before it uses the key.
    let stamp: String?
    let at: Int64
    let memory: ActiveKeyMemory
    let remembered: SealedSigningKey?

    init(realmID: String, stamp: String?, at: Int64, memory: ActiveKeyMemory) {
        self.realmID = realmID
        self.stamp = stamp
        self.at = at
        self.memory = memory
        remembered = stamp.flatMap { memory.key(realmID: realmID, stamp: $0, at: at) }
    }

    /// What to send with the caller's first reads: nothing when the key is remembered.
    public var statements: [(sql: String, parameters: [SQLValue])] {
        remembered == nil ? [SealedSigningKey.activeStatement(realmID: realmID)] : []
    }

    /// The lookup with the rows its `statements` returned, in order. Its `key()` remembers a key
    /// it read under the stamp: call it only once the transaction has confirmed the stamp (as
    /// `startSession` is, after its caller's check).
    public func answered(by rows: some Collection<[Row]>) -> Answer {
        Answer(lookup: self, rows: rows.first)
    }

    /// A lookup with its rows, for `SessionStore.startSession`.
    public struct Answer: Sendable {
        let lookup: ActiveKeyLookup
        let rows: [Row]?

        /// The active key. Throws `TokenError(.noSigningKey)` when the realm has none.
        func key() throws -> SealedSigningKey {
            if let remembered = lookup.remembered { return remembered }
            guard let rows else { preconditionFailure("a signing key lookup answered without its statement's rows") }
            let key = try SealedSigningKey.active(fromRows: rows)
            if let stamp = lookup.stamp {
                lookup.memory.remember(key, realmID: lookup.realmID, stamp: stamp, at: lookup.at)
            }
            return key
        }
    }
}
