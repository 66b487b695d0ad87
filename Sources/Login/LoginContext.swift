import Realms

/// What the login's pre-checks read in one reader turn.
struct LoginContext<Configuration: Sendable>: Sendable {
    let realm: Realm
    /// Seconds until the (realm, IP) failure window ends when its limit is reached.
    let blockedFor: Int?
    /// The realm's enabled configuration of the provider.
    let configuration: Configuration?
    let client: ClientApp?
}
