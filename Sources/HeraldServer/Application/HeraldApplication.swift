import Foundation
import HTTPServer
import Grants
import HeraldApple
import Login
import TokenIssuer
import JOSE
import Storage
import Synchronization

/// A running Herald: the database (migrated), the services built over it once, the routes and
/// the HTTP server around them, and the background services (`ServiceGroup`).
public final class HeraldApplication: Sendable {
    public let services: HeraldServices
    private let server: HTTPServer
    /// The `HERALD_ADMIN_LISTEN` server: the admin side alone, when configured.
    private let adminServer: HTTPServer?
    /// Housekeeping, request- and login-count sharing and Apple token work, started with the listeners.
    private let background: ServiceGroup
    private let stopped = Mutex(false)

    /// Opens the database, applies every module's migrations, builds the services and routes;
    /// call `start()` to begin serving. Configuration problems throw `ConfigurationError`.
    public static func open(configuration: HeraldConfiguration, logger: Logger,
                            now: @escaping @Sendable () -> Date) async throws -> HeraldApplication {
        try await open(configuration: configuration, logger: logger, now: now, maintenancePause: nil)
    }

    /// `open`, with the pause between housekeeping rounds (tests pace them; nil waits
    /// `MaintenanceLoop.interval`).
    static func open(configuration: HeraldConfiguration, logger: Logger, now: @escaping @Sendable () -> Date,
                     maintenancePause: (@Sendable () async -> Void)?) async throws -> HeraldApplication {
        let database = try await openDatabase(configuration: configuration, now: now)
        do {
            let services = try HeraldServices(configuration: configuration, database: database, logger: logger, now: now)
            try await HeraldBootstrap.run(services: services)
            let background = ServiceGroup(services: [
                MaintenanceLoop(database: database, eventRetentionDays: configuration.eventRetentionDays, logger: logger,
                                now: now, pause: maintenancePause),
                RequestCountSharing(limiter: services.requestLimiter, logger: logger),
                LoginCountSharing(counts: services.loginCounts, logger: logger),
                AppleHealthMonitor(realms: services.realms, overviews: services.overviews, logger: logger, now: now),
                services.appleTokenWork,
            ], logger: logger)
            return HeraldApplication(services: services, background: background)
        } catch {
            await database.close()
            throw error
        }
    }

    /// Opens the configured database and applies every module's migrations (also `herald migrate`).
    public static func openDatabase(configuration: HeraldConfiguration,
                                    now: @escaping @Sendable () -> Date) async throws -> any Database {
        // Opening blocks: on PostgreSQL it makes every pooled connection (`HERALD_DATABASE_CONNECTIONS`
        // handshakes, longer when the server is slow), and the cooperative pool has one thread
        // per core. It runs on a Dispatch thread instead, so nothing else in the process waits.
        let location = configuration.database, connections = configuration.databaseConnections
        let database = try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { () throws(ConfigurationError) -> any Database in
                    try DatabaseOpener.open(location, connections: connections, now: now)
                })
            }
        }
        do {
            try await database.migrate(HeraldMigrations.all)
        } catch {
            await database.close()
            throw error
        }
        return database
    }

    private init(services: HeraldServices, background: ServiceGroup) {
        self.services = services
        self.background = background
        let endpoint = Endpoint(logger: services.logger)
        var router = Router()
        for group in HeraldApplication.routeGroups(services) {
            group.register(in: &router, endpoint: endpoint)
        }
        var serverConfiguration = HTTPServerConfiguration()
        serverConfiguration.host = services.configuration.host
        serverConfiguration.port = services.configuration.port
        serverConfiguration.perIPConnectionLimit = services.configuration.perIPConnectionLimit
        serverConfiguration.connectionTimeoutSeconds = services.configuration.connectionTimeoutSeconds
        if services.configuration.publicURL.lowercased().hasPrefix("https://") {
            // Browsers reach Herald over https (through the proxy that terminates TLS): pin it.
            serverConfiguration.defaultResponseHeaders.add("Strict-Transport-Security", "max-age=31536000")
        }
        let logger = services.logger
        let metrics = services.metrics
        let errorResponder: ErrorResponder = { status, request in
                if status == 400, OAuthMalformedRequest.isOAuthEndpoint(request.path) {
                    return OAuthMalformedRequest.response(path: request.path)
                }
                return ErrorEnvelope.response(.forServerStatus(status), requestID: request.requestID)
            }
        let accessLog: @Sendable (AccessLogEntry) -> Void = AccessLog(logger: logger, metrics: metrics).write
        if let admin = services.configuration.adminListen {
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

    /// Every route group, in registration order, each given the services its routes use.
    static func routeGroups(_ services: HeraldServices) -> [any RouteGroup] {
        [OpsRoutes(database: services.database, metrics: services.metrics), OpenAPIRoutes(), ConsoleRoutes(),
         PublicKeyRoutes(realms: services.realms, keyRing: services.keyRing, logger: services.logger),
         AdminRoutes(stores: AdminStores(services), limiter: services.requestLimiter,
                     clientAddresses: services.clientAddresses, logger: services.logger),
         NativeLoginRoutes(appleLogin: services.nativeLogin, googleLogin: services.googleLogin,
                           appleTokens: services.appleTokens, clientAddresses: services.clientAddresses,
                           metrics: services.metrics, loginCounts: services.loginCounts, logger: services.logger),
         AppleNotificationRoutes(inbox: services.appleNotifications, metrics: services.metrics, logger: services.logger),
         AppleWebRoutes(appleWeb: services.appleWeb, appleRefusals: services.appleRefusals,
                        requestLimiter: services.requestLimiter, clientAddresses: services.clientAddresses,
                        recorder: LoginRecorder(door: .web, provider: services.nativeLogin.provider,
                                                metrics: services.metrics, counts: services.loginCounts,
                                                logger: services.logger),
                        metrics: services.metrics, logger: services.logger),
         GoogleWebRoutes(googleWeb: services.googleWeb, requestLimiter: services.requestLimiter,
                         clientAddresses: services.clientAddresses,
                         recorder: LoginRecorder(door: .web, provider: LoginProvider.google.name,
                                                 metrics: services.metrics, counts: services.loginCounts,
                                                 logger: services.logger),
                         logger: services.logger,
                         scriptURL: URL(string: services.configuration.googleGSIScriptURL) ?? GoogleSignInPage.defaultScriptURL,
                         publicURL: services.configuration.publicURL),
         SessionRoutes(realms: services.realms, oauthSettings: services.oauthSettings, accounts: services.accounts,
                       sessions: services.sessions,
                       accessTokens: services.accessTokens, requestLimiter: services.requestLimiter,
                       clientAddresses: services.clientAddresses, accountDeletions: services.accountDeletions,
                       logger: services.logger, now: services.now),
         OAuthRoutes(realms: services.realms, oauthSettings: services.oauthSettings, clients: services.clients,
                     accounts: services.accounts,
                     downstream: services.downstream, keyRing: services.keyRing, issuers: services.issuers,
                     sessions: services.sessions, accessTokens: services.accessTokens, codeExchange: services.codeExchange,
                     requestLimiter: services.requestLimiter, clientAddresses: services.clientAddresses,
                     logger: services.logger)]
    }

    /// The routes the server answers, for the OpenAPI agreement test.
    public static func routeTable(services: HeraldServices) -> [(method: String, template: String)] {
        var router = Router()
        for group in routeGroups(services) {
            group.register(in: &router, endpoint: Endpoint(logger: services.logger))
        }
        return router.routes
    }

    /// Binds the port and starts serving.
    public func start() throws {
        // The admin listener first: when its address is unusable nothing has been served yet,
        // and the caller's `shutdown()` (or dropping the application) stops what did start.
        try adminServer?.start()
        try server.start()
        background.start()
        services.logger.info("listening", ["host": .string(services.configuration.host), "port": .int(Int(server.boundPort))])
        if let adminServer, let admin = services.configuration.adminListen {
            services.logger.info("listening_admin", ["host": .string(admin.host), "port": .int(Int(adminServer.boundPort))])
        }
    }

    /// The bound port (useful when configured with port 0 in tests).
    public var port: UInt16 { server.boundPort }

    /// The admin listener's bound port, when `HERALD_ADMIN_LISTEN` is set.
    public var adminPort: UInt16? { adminServer?.boundPort }

    /// Stops accepting, finishes in-flight requests, cancels the background services and waits
    /// for each, then closes the database. A second call does nothing.
    public func shutdown() async {
        guard stopped.withLock({ stopped in defer { stopped = true }; return !stopped }) else { return }
        async let publicStopped: Void = server.shutdown()
        async let adminStopped: Void? = adminServer?.shutdown()
        _ = await (publicStopped, adminStopped)
        await background.shutdown()
        await services.database.close()
        services.logger.info("stopped")
    }
}
