/// What a node's PostgreSQL connection pool is doing, for `/metrics`: whether
/// `HERALD_DATABASE_CONNECTIONS` is too small shows as waits that keep growing while every
/// connection is in use.
public struct PostgresPoolUsage: Sendable, Equatable {
    /// Connections the pool keeps.
    public let size: Int
    /// Connections running a transaction (or a read) right now.
    public let inUse: Int
    /// Transactions so far that found every connection at work and waited for one.
    public let waits: Int
}
