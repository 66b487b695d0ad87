import Foundation
import HTTPServer
import Grants
import HeraldApple
import Login
import TokenIssuer
import JOSE
import Storage

/// A running Herald: the database (migrated), the routes and the HTTP server around them.
public final class HeraldApplication: Sendable {
    public let context: HeraldContext
    private let server: HTTPServer
    /// The `HERALD_ADMIN_LISTEN` server: the admin side alone, when configured.
    private let adminServer: HTTPServer?
    private let maintenance: MaintenanceLoop

    /// Opens the database, applies every module's migrations and builds the routes; call
    /// `start()` to begin serving. Configuration problems throw `ConfigurationError`.
    public static func open(configuration: HeraldConfiguration, logger: Logger,
                            now: @escaping @Sendable () -> Date) async throws -> HeraldApplication {
        try await open(configuration: configuration, logger: logger, now: now, maintenance: MaintenanceLoop())
    }

    /// `open`, with the housekeeping loop to run (tests pace its rounds).
    static func open(configuration: HeraldConfiguration, logger: Logger, now: @escaping @Sendable () -> Date,
                     maintenance: MaintenanceLoop) async throws -> HeraldApplication {
        let database = try await openDatabase(configuration: configuration, now: now)
        do {
            let masterKey = try MasterKeyLoader.load(configuration: configuration)
            let issuers = RealmIssuers(publicURL: configuration.publicURL)
            // One signer: it caches decrypted keys, and the verifier trusts the keys it signs with.
            let signer = TokenSigner(masterKey: masterKey, issuers: issuers)
            let sessions = SessionStore(database: database, signer: signer, now: now)
            let jwksURL = URL(string: configuration.appleJWKSURL) ?? AppleJWKSClientConfiguration.defaultURL
            let jwks = AppleJWKSCache(configuration: AppleJWKSClientConfiguration(url: jwksURL), now: now)
            let verifier = AppleIdentityVerifier(jwks: jwks, replayStore: AppleReplayStore(), now: now)
            let nativeLogin = IdentityTokenLogin(database: database, verifier: verifier, sessions: sessions,
                                                 issuers: issuers, limiter: LoginAttemptLimiter(database: database, now: now),
                                                 downstream: DownstreamAuthorizations(database: database, now: now),
                                                 now: now)
            let codeExchange = AuthorizationCodeExchange(database: database, codes: AuthorizationCodes(now: now),
                                                         sessions: sessions, now: now)
            let apple = AppleAPIClient(baseURL: URL(string: configuration.appleBaseURL) ?? AppleAPIClient.defaultBaseURL)
            let appleTokens = AppleTokenVault(database: database, masterKey: masterKey, apple: apple, now: now)
            let appleWeb = AppleWebLogin(database: database, masterKey: masterKey, apple: apple, login: nativeLogin,
                                         vault: appleTokens, now: now)
            let appleNotifications = AppleNotificationInbox(
                database: database, verifier: AppleNotificationVerifier(keys: jwks, now: now),
                processor: AppleNotificationProcessor(database: database, sessions: SessionRevoker(now: now), now: now))
            let context = HeraldContext(configuration: configuration, database: database, masterKey: masterKey,
                                        logger: logger, now: now,
                                        clientAddresses: ClientAddressResolver(trustedProxies: configuration.trustedProxies),
                                        metrics: HeraldMetrics(collectors: [{ jwks.metrics.prometheusText }]),
                                        sessions: sessions,
                                        accessTokens: AccessTokenVerifier(database: database, signer: signer, now: now),
                                        issuers: issuers, nativeLogin: nativeLogin, codeExchange: codeExchange,
                                        appleNotifications: appleNotifications,
                                        appleTokens: appleTokens, appleWeb: appleWeb,
                                        requestLimiter: RequestRateLimiter(
                                            database: database, limits: configuration.requestLimits,
                                            windowCapacity: RequestRateLimiter.windowCapacity, now: now))
            try await HeraldBootstrap.run(context: context)
            return HeraldApplication(context: context, maintenance: maintenance)
        } catch {
            await database.close()
            throw error
        }
    }

    /// Opens the configured database and applies every module's migrations (also `herald migrate`).
    public static func openDatabase(configuration: HeraldConfiguration,
                                    now: @escaping @Sendable () -> Date) async throws -> any Database {
        let database = try DatabaseOpener.open(configuration.database, now: now)
        do {
            try await database.migrate(HeraldMigrations.all)
        } catch {
            await database.close()
            throw error
        }
        return database
    }

    private init(context: HeraldContext, maintenance: MaintenanceLoop) {
        self.context = context
        self.maintenance = maintenance
        let endpoint = Endpoint(logger: context.logger)
        var router = Router()
        for group in HeraldApplication.routeGroups(context: context) {
            group.register(in: &router, endpoint: endpoint)
        }
        var serverConfiguration = HTTPServerConfiguration()
        serverConfiguration.host = context.configuration.host
        serverConfiguration.port = context.configuration.port
        serverConfiguration.perIPConnectionLimit = context.configuration.perIPConnectionLimit
        serverConfiguration.connectionTimeoutSeconds = context.configuration.connectionTimeoutSeconds
        if context.configuration.publicURL.lowercased().hasPrefix("https://") {
            // Browsers reach Herald over https (through the proxy that terminates TLS): pin it.
            serverConfiguration.defaultResponseHeaders.add("Strict-Transport-Security", "max-age=31536000")
        }
        let logger = context.logger
        let metrics = context.metrics
        let errorResponder: ErrorResponder = { status, request in
                if status == 400, OAuthMalformedRequest.isOAuthEndpoint(request.path) {
                    return OAuthMalformedRequest.response(path: request.path)
                }
                return ErrorEnvelope.response(.forServerStatus(status), requestID: request.requestID)
            }
        let accessLog: @Sendable (AccessLogEntry) -> Void = { entry in
                metrics.recordRequest(route: entry.route, status: entry.status, durationSeconds: entry.durationSeconds)
                logger.info("request", ["method": .string(entry.method), "route": .string(entry.route),
                                        "status": .int(entry.status),
                                        "durationMs": .double((entry.durationSeconds * 100_000).rounded() / 100),
                                        "requestId": .string(entry.requestID)])
            }
        if let admin = context.configuration.adminListen {
            // The admin side moves to its own address; the public listener no longer has those
            // routes, so it answers them 404 like any unknown path (not 401: nothing says they exist).
            server = HTTPServer(configuration: serverConfiguration,
                                router: router.filtered { !Self.isAdminSide($0) },
                                errorResponder: errorResponder, accessLog: accessLog)
            var adminConfiguration = serverConfiguration
            adminConfiguration.host = admin.host
            adminConfiguration.port = admin.port
            adminServer = HTTPServer(configuration: adminConfiguration,
                                     router: router.filtered { Self.isAdminSide($0) || Self.isProbe($0) },
                                     errorResponder: errorResponder, accessLog: accessLog)
        } else {
            server = HTTPServer(configuration: serverConfiguration, router: router,
                                errorResponder: errorResponder, accessLog: accessLog)
            adminServer = nil
        }
    }

    /// Routes that `HERALD_ADMIN_LISTEN` moves off the public listener: the admin API, the
    /// console and the metrics (which name realms and clients).
    static func isAdminSide(_ template: String) -> Bool {
        template == "/metrics" || template == "/api/admin" || template.hasPrefix("/api/admin/")
            || template == "/console" || template.hasPrefix("/console/")
    }

    /// Health probes are answered on both listeners, so each can be monitored on its own.
    static func isProbe(_ template: String) -> Bool {
        template == "/healthz" || template == "/readyz"
    }

    /// Every route group, in registration order.
    static func routeGroups(context: HeraldContext) -> [any RouteGroup] {
        [OpsRoutes(context: context), OpenAPIRoutes(), ConsoleRoutes(), PublicKeyRoutes(context: context),
         AdminRoutes(context: context, sessionRevoker: SessionRevoker(now: context.now)),
         NativeLoginRoutes(context: context), AppleNotificationRoutes(context: context),
         AppleWebRoutes(context: context), SessionRoutes(context: context), OAuthRoutes(context: context)]
    }

    /// The routes the server answers, for the OpenAPI agreement test.
    public static func routeTable(context: HeraldContext) -> [(method: String, template: String)] {
        var router = Router()
        for group in routeGroups(context: context) {
            group.register(in: &router, endpoint: Endpoint(logger: context.logger))
        }
        return router.routes
    }

    /// Binds the port and starts serving.
    public func start() throws {
        // The admin listener first: when its address is unusable nothing has been served yet,
        // and the caller's `shutdown()` (or dropping the application) stops what did start.
        try adminServer?.start()
        try server.start()
        maintenance.start(context: context)
        context.requestLimiter.startSharing(logger: context.logger)
        context.logger.info("listening", ["host": .string(context.configuration.host), "port": .int(Int(server.boundPort))])
        if let adminServer, let admin = context.configuration.adminListen {
            context.logger.info("listening_admin", ["host": .string(admin.host), "port": .int(Int(adminServer.boundPort))])
        }
    }

    /// The bound port (useful when configured with port 0 in tests).
    public var port: UInt16 { server.boundPort }

    /// The admin listener's bound port, when `HERALD_ADMIN_LISTEN` is set.
    public var adminPort: UInt16? { adminServer?.boundPort }

    /// Stops accepting, finishes in-flight requests and housekeeping, then closes the database.
    public func shutdown() async {
        async let publicStopped: Void = server.shutdown()
        async let adminStopped: Void? = adminServer?.shutdown()
        _ = await (publicStopped, adminStopped)
        await maintenance.stop()
        await context.requestLimiter.stopSharing()
        await context.database.close()
        context.logger.info("stopped")
    }
}
