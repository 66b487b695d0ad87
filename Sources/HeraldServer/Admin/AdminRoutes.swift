import Foundation
import HTTPServer
import HeraldApple
import Realms
import Storage
import TokenIssuer

/// The stores admin handlers work with, all built once at start (`HeraldServices`).
struct AdminStores: Sendable {
    let realms: RealmStore
    let appleProviders: AppleProviderStore
    let googleProviders: GoogleProviderStore
    let clients: ClientAppStore
    let accounts: AccountStore
    let adminTokens: AdminTokenStore
    let audit: AuditLog
    let events: SecurityEventLog
    let keyRing: SigningKeyRing
    let sessions: SessionStore
    /// Revokes an account's sessions on an operator's request.
    let sessionRevoker: SessionRevoker
    /// Account deletion, shared with the owner's `DELETE /me`.
    let accountDeletions: AccountDeletions
    /// The realm overview (sign-in counts, Apple's health).
    let overviews: RealmOverviews
    let database: any Database
    let now: @Sendable () -> Date

    init(_ services: HeraldServices) {
        realms = services.realms
        appleProviders = services.appleProviders
        googleProviders = services.googleProviders
        clients = services.clients
        accounts = services.accounts
        adminTokens = services.adminTokens
        audit = services.audit
        events = services.events
        keyRing = services.keyRing
        sessions = services.sessions
        sessionRevoker = services.sessionRevoker
        accountDeletions = services.accountDeletions
        overviews = services.overviews
        database = services.database
        now = services.now
    }
}

/// `/api/admin/*`: realms, the Apple and Google providers, clients, accounts, the audit log, security events
/// and admin tokens. Every route authenticates the admin token first (401 before any lookup),
/// then `AdminAccessPolicy` applies the token's scope and role to what the route declares
/// (404 / 403, audited), and domain errors become the error envelope (400 naming fields, 404, 409).
struct AdminRoutes: RouteGroup {
    let stores: AdminStores
    let limiter: RequestRateLimiter
    let clientAddresses: ClientAddressResolver
    let logger: Logger

    /// Every admin route, in registration order.
    static func routes(_ stores: AdminStores) -> [AdminRoute] {
        RealmAdminHandlers(stores: stores).routes + AppleProviderAdminHandlers(stores: stores).routes
            + GoogleProviderAdminHandlers(stores: stores).routes
            + ClientAdminHandlers(stores: stores).routes + AccountAdminHandlers(stores: stores).routes
            + AuditAdminHandlers(stores: stores).routes + KeyAdminHandlers(stores: stores).routes
            + SessionAdminHandlers(stores: stores).routes + SecurityEventAdminHandlers(stores: stores).routes
            + AdminTokenAdminHandlers(stores: stores).routes + OverviewAdminHandlers(stores: stores).routes
    }

    func register(in router: inout Router, endpoint: Endpoint) {
        let authenticator = AdminAuthenticator(tokens: stores.adminTokens, limiter: limiter,
                                               clientAddresses: clientAddresses, logger: logger)
        let policy = AdminAccessPolicy(database: stores.database, now: stores.now, logger: logger)
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
