import Foundation
import JOSE
import Storage
import HTTPServer
import HeraldApple
import Login
import TokenIssuer

/// What route groups share: configuration, the database, the master key, the clock, logging.
public struct HeraldContext: Sendable {
    public let configuration: HeraldConfiguration
    public let database: any Database
    public let masterKey: MasterKey
    public let logger: Logger
    public let now: @Sendable () -> Date
    public let clientAddresses: ClientAddressResolver
    public let metrics: HeraldMetrics
    /// Sessions: start, refresh, revoke, look up.
    public let sessions: SessionStore
    /// Access tokens presented to Herald (shares the session store's signer and its key cache).
    public let accessTokens: AccessTokenVerifier
    /// Every realm's issuer (`iss`, discovery, RFC 9207 authorization responses).
    public let issuers: RealmIssuers
    /// The login with Apple's identity tokens, for native apps and the web callback (one
    /// instance: its JWKS cache is shared by every request).
    public let nativeLogin: IdentityTokenLogin<AppleIdentityVerifier>
    /// The token endpoint's `authorization_code` grant.
    public let codeExchange: AuthorizationCodeExchange
    /// Apple's server-to-server notifications (verified with native login's JWKS cache).
    public let appleNotifications: AppleNotificationInbox
    /// Apple refresh tokens from native logins' authorization codes, revoked on account deletion.
    public let appleTokens: AppleTokenVault
    /// Sign in with Apple in a browser (the same login pipeline as native apps).
    public let appleWeb: AppleWebLogin
    /// The request limits of `/token`, session refresh and `/authorize` (one instance: it paces its purge).
    let requestLimiter: RequestRateLimiter

    /// Current time as unix seconds, the unit stored everywhere.
    public var unixNow: Int64 { now().unixSeconds }
}

/// A set of routes registered together (ops, admin, public OAuth, session API).
protocol RouteGroup {
    func register(in router: inout Router, endpoint: Endpoint)
}
