/// A session written inside a caller's transaction whose tokens are not signed yet: what
/// `SessionStore.startSession(in:_:account:withProfile:)` hands to `SessionStore.issue(_:)`. Holds the new refresh
/// token in memory only (the database keeps its hash); never log it.
public struct PreparedSession: Sendable {
    let session: SessionSnapshot
    let material: SigningMaterial
    let refreshToken: String
    let nonce: String?
    let at: Int64

    /// The new session's id.
    public var sessionID: String { session.id }
    /// The account the session belongs to.
    public var accountID: String { session.accountID }
}
