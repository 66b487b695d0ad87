import Foundation
import HTTPServer
import Realms
import Storage
import TokenIssuer

/// The stores admin handlers work with, built once from the context.
struct AdminStores: Sendable {
    let realms: RealmStore
    let appleProviders: AppleProviderStore
    let clients: ClientAppStore
    let accounts: AccountStore
    let adminTokens: AdminTokenStore
    let audit: AuditLog
    let events: SecurityEventLog
    let keyRing: SigningKeyRing
    let sessions: SessionStore
    let database: any Database
    let now: @Sendable () -> Date
    /// For work an admin change starts after it committed (revoking a deleted account's Apple tokens).
    let context: HeraldContext

    init(context: HeraldContext, sessionRevoker: any AccountSessionRevoker & ClientSessionRevoker) {
        let database = context.database
        self.database = database
        self.context = context
        sessions = context.sessions
        now = context.now
        realms = RealmStore(database: database, now: context.now)
        appleProviders = AppleProviderStore(database: database, masterKey: context.masterKey, now: context.now)
        clients = ClientAppStore(database: database, sessionRevoker: sessionRevoker, now: context.now)
        accounts = AccountStore(database: database, sessionRevoker: sessionRevoker, deletionHook: context.appleTokens,
                                now: context.now)
        adminTokens = AdminTokenStore(database: database, now: context.now)
        audit = AuditLog(database: database)
        events = SecurityEventLog(database: database)
        keyRing = SigningKeyRing(database: database, masterKey: context.masterKey, now: context.now)
    }
}

/// `/api/admin/*`: realms, the Apple provider, clients, accounts, the audit log, security events
/// and admin tokens. Every route authenticates the admin token first (401 before any lookup),
/// then `AdminAccessPolicy` applies the token's scope and role to what the route declares
/// (404 / 403, audited), and domain errors become the error envelope (400 naming fields, 404, 409).
struct AdminRoutes: RouteGroup {
    let context: HeraldContext
    /// Revokes sessions when an account or a client is disabled or deleted (TokenIssuer plugs in here).
    let sessionRevoker: any AccountSessionRevoker & ClientSessionRevoker

    /// Every admin route, in registration order.
    static func routes(_ stores: AdminStores) -> [AdminRoute] {
        RealmAdminHandlers(stores: stores).routes + AppleProviderAdminHandlers(stores: stores).routes
            + ClientAdminHandlers(stores: stores).routes + AccountAdminHandlers(stores: stores).routes
            + AuditAdminHandlers(stores: stores).routes + KeyAdminHandlers(stores: stores).routes
            + SessionAdminHandlers(stores: stores).routes + SecurityEventAdminHandlers(stores: stores).routes
            + AdminTokenAdminHandlers(stores: stores).routes
    }

    func register(in router: inout Router, endpoint: Endpoint) {
        let stores = AdminStores(context: context, sessionRevoker: sessionRevoker)
        let authenticator = AdminAuthenticator(tokens: stores.adminTokens, limiter: context.requestLimiter,
                                               clientAddresses: context.clientAddresses, logger: context.logger)
        let policy = AdminAccessPolicy(database: context.database, now: context.now, logger: context.logger)
        for route in Self.routes(stores) {
            let handler = route.handler
            router.add(route.method, route.template, endpoint.handler { request in
                let caller = try await authenticator.authenticate(request)
                try await policy.check(route, caller: caller, request: request)
                do {
                    // Admin answers carry accounts' emails and names, audit trails and one-time
                    // secrets: no cache (browser, proxy) may keep them.
                    var response = try await handler(request, caller)
                    response.headers.set("Cache-Control", "no-store")
                    return response
                } catch let error as RealmsError {
                    throw APIError(error)
                }
            })
        }
    }
}

extension HTTPRequest {
    /// A path parameter by name (`realm` for `:realm`).
    func parameter(_ name: String) -> String {
        pathParameters[name] ?? pathParameters[":" + name] ?? ""
    }
}
