import Storage

/// A verified token's single-use mark that verification decided on but left to the login's
/// write transaction, so it commits with the account and the session (one writer turn, one
/// sync per login).
public protocol ReplayClaim: Sendable {
    /// Records the claim in `db`'s transaction; false when the token was already used.
    func record(in db: any SQLExecutor) throws -> Bool
}
