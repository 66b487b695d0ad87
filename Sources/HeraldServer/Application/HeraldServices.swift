import Foundation
import Grants
import HeraldApple
import HeraldGoogle
import JOSE
import Login
import ProviderKeys
import Realms
import Storage
import TokenIssuer

/// Everything a running Herald is built from, each built once, at start
/// (`HeraldApplication.open`): configuration, the database, the master key, the clock, logging,
/// and the stores and services over them. Route groups and background services receive the
/// parts they use, never this whole; tests read it (`application.services`).
public struct HeraldServices: Sendable {
    public let configuration: HeraldConfiguration
    public let database: any Database
    public let masterKey: MasterKey
    public let logger: Logger
    public let now: @Sendable () -> Date
    public let clientAddresses: ClientAddressResolver
    public let metrics: HeraldMetrics
    /// Realms, read by every public route (a disabled realm answers 404).
    public let realms: RealmStore
    public let appleProviders: AppleProviderStore
    /// Each realm's Google provider (its accepted client ids); the admin API writes it.
    public let googleProviders: GoogleProviderStore
    public let clients: ClientAppStore
    public let accounts: AccountStore
    public let adminTokens: AdminTokenStore
    public let audit: AuditLog
    public let events: SecurityEventLog
    public let keyRing: SigningKeyRing
    /// The one revoker of sessions, for the stores that disable or delete accounts and clients,
    /// Apple's notifications and the admin session routes.
    public let sessionRevoker: SessionRevoker
    /// Sessions: start, refresh, revoke, look up.
    public let sessions: SessionStore
    /// Access tokens presented to Herald (shares the session store's signer and its key cache).
    public let accessTokens: AccessTokenVerifier
    /// Every realm's issuer (`iss`, discovery, RFC 9207 authorization responses).
    public let issuers: RealmIssuers
    /// Pending downstream authorizations (`/authorize`, the logins' branch B).
    public let downstream: DownstreamAuthorizations
    /// The login with Apple's identity tokens, for native apps and the web callback (one
    /// instance: its JWKS cache is shared by every request).
    public let nativeLogin: IdentityTokenLogin<AppleIdentityVerifier>
    /// The login with Google's ID tokens, for native apps and Google's web button (the same
    /// pipeline as Apple's, with Google's verifier and its own JWKS cache).
    public let googleLogin: IdentityTokenLogin<GoogleIdentityVerifier>
    /// Sign in with Google in a browser (Google's button, the same pipeline).
    public let googleWeb: GoogleWebLogin
    /// The token endpoint's `authorization_code` grant.
    public let codeExchange: AuthorizationCodeExchange
    /// Apple's server-to-server notifications (verified with native login's JWKS cache).
    public let appleNotifications: AppleNotificationInbox
    /// Apple refresh tokens of native and web logins, revoked on account deletion; its queues
    /// are drained by `appleTokenWork`.
    public let appleTokens: AppleTokenVault
    /// Account deletion for the admin API and the owner's `DELETE /me` (one path).
    let accountDeletions: AccountDeletions
    /// Sign in with Apple in a browser (the same login pipeline as native apps).
    public let appleWeb: AppleWebLogin
    /// Security events for Apple's refusals of code exchanges, from both doors.
    let appleRefusals: AppleExchangeRefusals
    /// The request limits of `/token`, session refresh and `/authorize` (one instance: it paces its purge).
    let requestLimiter: RequestRateLimiter
    /// The background calls to Apple (code exchanges, revocations).
    let appleTokenWork: AppleTokenWork
    /// Sign-in counts per realm and hour for the realm overview, shared by `LoginCountSharing`.
    let loginCounts: LoginCounts
    /// What refreshes read before their write, remembered on this node (`/token`, session API).
    let oauthSettings = OAuthSettingsMemory()
    /// Each realm's Apple health warnings, as the gauge `herald_apple_health_warning`.
    let appleHealthWarnings: AppleHealthWarnings
    /// Realm overviews for the admin API and the warnings' monitor.
    let overviews: RealmOverviews

    /// Builds every store and service over an opened, migrated database. Configuration problems
    /// (an unusable master key) throw `ConfigurationError`.
    init(configuration: HeraldConfiguration, database: any Database, logger: Logger,
                 now: @escaping @Sendable () -> Date) throws {
        self.configuration = configuration
        self.database = database
        self.logger = logger
        self.now = now
        let masterKey = try MasterKeyLoader.load(configuration: configuration)
        self.masterKey = masterKey
        clientAddresses = ClientAddressResolver(trustedProxies: configuration.trustedProxies)
        let sessionRevoker = SessionRevoker(now: now)
        self.sessionRevoker = sessionRevoker
        let issuers = RealmIssuers(publicURL: configuration.publicURL)
        self.issuers = issuers
        // One signer: it caches decrypted keys, and the verifier trusts the keys it signs with.
        let signer = TokenSigner(masterKey: masterKey, issuers: issuers)
        let sessions = SessionStore(database: database, signer: signer, now: now)
        self.sessions = sessions
        accessTokens = AccessTokenVerifier(database: database, signer: signer, now: now)
        let jwksURL = URL(string: configuration.appleJWKSURL) ?? AppleJWKSClientConfiguration.defaultURL
        let jwks = AppleJWKSCache(configuration: AppleJWKSClientConfiguration(url: jwksURL), now: now)
        let googleURL = URL(string: configuration.googleJWKSURL) ?? GoogleJWKS.defaultURL
        let googleJWKS = JWKSCache(configuration: GoogleJWKS.configuration(url: googleURL), now: now)
        let appleHealthWarnings = AppleHealthWarnings()
        self.appleHealthWarnings = appleHealthWarnings
        var collectors: [@Sendable () -> String] = [
            { jwks.metrics.prometheusText(provider: "apple") }, { googleJWKS.metrics.prometheusText(provider: "google") },
            { appleHealthWarnings.prometheusText() },
        ]
        if let postgres = database as? PostgresDatabase {
            collectors.append {
                postgres.roundTrips.prometheusText + postgres.connectionPool.prometheusText + postgres.connectionLosses.prometheusText
                    + postgres.writeConflicts.prometheusText
            }
        }
        if let sqlite = database as? SQLiteDatabase {
            collectors.append { sqlite.commitBatches.prometheusText }
        }
        let metrics = HeraldMetrics(collectors: collectors)
        self.metrics = metrics
        let events = SecurityEventLog(database: database)
        self.events = events
        realms = RealmStore(database: database, now: now)
        appleProviders = AppleProviderStore(database: database, masterKey: masterKey, now: now)
        googleProviders = GoogleProviderStore(database: database, now: now)
        clients = ClientAppStore(database: database, sessionRevoker: sessionRevoker, now: now)
        adminTokens = AdminTokenStore(database: database, now: now)
        audit = AuditLog(database: database)
        keyRing = SigningKeyRing(database: database, masterKey: masterKey, now: now)
        let downstream = DownstreamAuthorizations(database: database, now: now)
        self.downstream = downstream

        let verifier = AppleIdentityVerifier(jwks: jwks, replayStore: AppleReplayStore(), now: now)
        let nativeLogin = IdentityTokenLogin(database: database, verifier: verifier, sessions: sessions,
                                             issuers: issuers, limiter: LoginAttemptLimiter(database: database, now: now),
                                             downstream: downstream, now: now)
        self.nativeLogin = nativeLogin
        let googleVerifier = GoogleIdentityVerifier(
            jwks: googleJWKS, replayStore: GoogleReplayStore(),
            requirements: GoogleRealmRequirements.stored, now: now)
        googleLogin = IdentityTokenLogin(database: database, verifier: googleVerifier, sessions: sessions, issuers: issuers,
                                         limiter: LoginAttemptLimiter(database: database, now: now),
                                         downstream: downstream, now: now)
        googleWeb = GoogleWebLogin(database: database, login: googleLogin, now: now)
        codeExchange = AuthorizationCodeExchange(database: database, codes: AuthorizationCodes(now: now),
                                                 sessions: sessions, now: now)
        let apple = AppleAPIClient(baseURL: URL(string: configuration.appleBaseURL) ?? AppleAPIClient.defaultBaseURL)
        // The vault wakes the work that drains its queues whenever it queues something.
        let appleTokenSignal = WakeSignal()
        let appleTokens = AppleTokenVault(database: database, masterKey: masterKey, apple: apple, now: now,
                                          queueChanged: { appleTokenSignal.wake() })
        self.appleTokens = appleTokens
        let accounts = AccountStore(database: database, sessionRevoker: sessionRevoker, deletionHook: appleTokens, now: now)
        self.accounts = accounts
        accountDeletions = AccountDeletions(accounts: accounts, appleTokens: appleTokens)
        appleWeb = AppleWebLogin(database: database, masterKey: masterKey, apple: apple, login: nativeLogin,
                                 vault: appleTokens, now: now)
        appleNotifications = AppleNotificationInbox(
            database: database, verifier: AppleNotificationVerifier(keys: jwks, now: now),
            processor: AppleNotificationProcessor(database: database, sessions: sessionRevoker, now: now))
        let appleExchanges = AppleExchangeOutcomes()
        let appleRefusals = AppleExchangeRefusals(events: events, outcomes: appleExchanges, warnings: appleHealthWarnings,
                                                  logger: logger, now: now)
        self.appleRefusals = appleRefusals
        appleTokenWork = AppleTokenWork(vault: appleTokens, signal: appleTokenSignal, metrics: metrics, logger: logger,
                                        refusals: appleRefusals, now: now)
        let loginCounts = LoginCounts(database: database, now: now)
        self.loginCounts = loginCounts
        overviews = RealmOverviews(realms: realms, appleProviders: appleProviders, events: events, counts: loginCounts,
                                   exchanges: appleExchanges, warnings: appleHealthWarnings,
                                   appleKeys: { jwks.metrics }, database: database, now: now)
        requestLimiter = RequestRateLimiter(database: database, limits: configuration.requestLimits,
                                            windowCapacity: RequestRateLimiter.windowCapacity, now: now)
    }

    /// Current time as unix seconds, the unit stored everywhere.
    public var unixNow: Int64 { now().unixSeconds }
}
