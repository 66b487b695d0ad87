import Realms

/// What the login's pre-checks need: read in one reader turn, or remembered by
/// `LoginContextCache` (then without a failure count, which the write transaction reads).
struct LoginContext<Configuration: Sendable>: Sendable {
    let realm: Realm
    /// The realm's `RealmSettingsVersion` when the settings below were read.
    let version: String
    /// Seconds until the (realm, IP) failure window ends when its limit is reached; always nil
    /// when remembered.
    let blockedFor: Int?
    /// The realm's enabled configuration of the provider.
    let configuration: Configuration?
    let client: ClientApp?
    /// Whether these settings came from memory rather than from this login's own read.
    var isRemembered = false

    /// Whether a later login may start from these settings: everything a login needs is there
    /// and enabled. Settings that refuse are never remembered, so a refusal is always decided
    /// on what is stored.
    var isUsable: Bool { realm.enabled && configuration != nil && client?.enabled == true }

    /// The same settings as a later login finds them in memory.
    var remembered: LoginContext {
        var context = LoginContext(realm: realm, version: version, blockedFor: nil, configuration: configuration,
                                   client: client)
        context.isRemembered = true
        return context
    }
}
