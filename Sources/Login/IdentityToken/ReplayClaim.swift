import Storage

/// A verified token's single-use mark that verification decided on but left to the login's
/// write transaction, so it commits with the account and the session (one writer turn, one
/// sync per login).
public protocol ReplayClaim: Sendable {
    /// Records the claim in `db`'s transaction; false when the token was already used.
    func record(in db: any SQLExecutor) throws -> Bool
    /// The claim as one statement that returns a row when it recorded the claim, for a login
    /// that sends it with its reads in one round trip (`SQLExecutor.queryBatch`); nil when
    /// recording takes more (a purge is due): the login then calls `record(in:)`.
    var statement: (sql: String, parameters: [SQLValue])? { get }
    /// Whether the token is claimed now (by this login or another use of the same token): read
    /// when the login's COMMIT went unanswered.
    func isRecorded(in db: any SQLExecutor) throws -> Bool
}

extension ReplayClaim {
    /// By default, a claim is recorded with `record(in:)` alone.
    public var statement: (sql: String, parameters: [SQLValue])? { nil }
}
