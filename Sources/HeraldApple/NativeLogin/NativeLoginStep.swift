import Realms
import TokenIssuer

/// What native login's one write transaction decided. Refusals are returned, not thrown, so
/// the transaction still commits the replay claim of a token it refuses.
enum NativeLoginStep: Sendable {
    /// The (sub, nonce) was already claimed: nothing else was done.
    case replayed
    /// The claim committed; resolution or session start refused the login and was undone.
    case refused(NativeLoginError)
    /// The account (and for branch A the session, whose tokens are still to be signed).
    case resolved(AccountResolution, PreparedSession?)
}
