import Storage

/// A completed downstream authorization (branch B of native login): where the browser goes
/// next, and the code that went with it, remembered only as its hash.
public struct DownstreamCompletion: Sendable {
    /// The backend's redirect URI carrying `code`, its `state` and `iss`.
    public let redirectURI: String
    let codeHash: [UInt8]

    /// Whether the code is stored: how a login whose COMMIT went unanswered learns whether it
    /// committed (the code is random, so only this completion could have stored it).
    public func isStored(in db: any SQLExecutor) throws -> Bool {
        try db.queryOne("SELECT 1 AS stored FROM authorization_codes WHERE code_hash = ?", .blob(codeHash)) != nil
    }
}
