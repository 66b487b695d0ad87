import Realms

/// What the login's pre-checks read in one reader turn.
struct NativeLoginContext: Sendable {
    let realm: Realm
    /// Seconds until the (realm, IP) failure window ends when its limit is reached.
    let blockedFor: Int?
    let provider: AppleProviderConfig?
    let client: ClientApp?
}
