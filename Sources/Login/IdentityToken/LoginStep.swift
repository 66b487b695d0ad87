import Grants
import Realms
import TokenIssuer

/// What the login's one write transaction decided. Refusals are returned, not thrown, so the
/// transaction still commits the replay claim of a token it refuses.
enum LoginStep: Sendable {
    /// The realm's settings changed since the login read them: nothing was done.
    case stale
    /// A remembered context's (realm, IP) failure limit is reached: nothing was done.
    case blocked(retryAfterSeconds: Int)
    /// The token's single-use claim was taken before: nothing else was done.
    case replayed
    /// The claim committed; resolution, session start or downstream completion refused the
    /// login and was undone.
    case refused(LoginError)
    /// Branch A: the account and its session, whose tokens are still to be signed.
    case session(AccountResolution, PreparedSession)
    /// Branch B: the account and the redirect URI carrying the code committed with it.
    case downstream(AccountResolution, DownstreamCompletion)
}
