/// How a write transaction is isolated from concurrent ones. It only matters on PostgreSQL:
/// SQLite has one writer, so its writes never interleave whatever is asked.
public enum WriteIsolation: Sendable {
    /// As if every write ran alone (PostgreSQL SERIALIZABLE): a body's read-then-write needs no
    /// further thought. The default. Conflicts are detected and the body runs again.
    case serializable
    /// Each statement sees what committed before it started (PostgreSQL READ COMMITTED), for hot
    /// bodies whose correctness rests on conditional statements (`UPDATE … WHERE rotated_at IS
    /// NULL`, `INSERT … ON CONFLICT`) and unique constraints alone. SERIALIZABLE locks index
    /// pages, so concurrent inserts into the same small tables conflict with each other;
    /// READ COMMITTED only waits where two writes touch the same row.
    case readCommitted
}
