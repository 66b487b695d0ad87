import Realms
import TokenIssuer

/// What native login's one write transaction decided. Refusals are returned, not thrown, so
/// the transaction still commits the replay claim of a token it refuses.
enum NativeLoginStep: Sendable {
    /// The (sub, nonce) was already claimed: nothing else was done.
    case replayed
    /// The claim committed; resolution, session start or downstream completion refused the
    /// login and was undone.
    case refused(NativeLoginError)
    /// Branch A: the account and its session, whose tokens are still to be signed.
    case session(AccountResolution, PreparedSession)
    /// Branch B: the account and the redirect URI carrying the code committed with it.
    case downstream(AccountResolution, redirectURI: String)
}
