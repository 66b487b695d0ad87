import Foundation
import HTTPServer
import JOSE
import Realms
import Storage

/// The scope and role rules of every admin route, applied in one place (`AdminRoutes`) after
/// the token was authenticated and before the handler runs, from what the route declares
/// (`AdminRoute.writes`, `realmParameter`, `reach`):
/// 1. a realm outside the token's scope → 404, as for a realm that does not exist;
/// 2. an all-realms route called with a realm-scoped token → 403 `forbidden`;
/// 3. a write by a viewer → 403 `forbidden`.
/// Every refusal is answered the same way and logged; it is audited as `admin.denied` (actor =
/// token name, path, method, why, never a secret nor the caller's free text) up to
/// `auditedDenials` per token. A refusal is filed under the route's realm only when the token's
/// scope includes it and the realm exists, so a token cannot write into the audit of a realm it
/// cannot see (nor of one created later under that id); else under no realm, which only
/// all-realms tokens see.
struct AdminAccessPolicy: Sendable {
    /// Why a call was refused, as recorded in the audit entry.
    enum Refusal: String, Sendable, Equatable {
        /// The route's realm is outside the token's realms.
        case realmOutsideScope = "realm_outside_scope"
        /// The route needs a token of all realms.
        case needsAllRealms = "needs_all_realms"
        /// The route writes and the token is a viewer.
        case readOnlyRole = "read_only_role"

        var error: APIError {
            switch self {
            case .realmOutsideScope: APIError(RealmsError.notFound("realm"))
            case .needsAllRealms: APIError(status: 403, code: "forbidden", message: "This admin token is limited to some realms")
            case .readOnlyRole: APIError(status: 403, code: "forbidden", message: "This admin token may only read")
            }
        }
    }

    /// The longest request path kept in a denial's audit entry.
    static let maxRecordedPathLength = 512

    let database: any Database
    let now: @Sendable () -> Date
    let logger: Logger

    /// Why `caller` may not call `route` with the realm `realmID` (the route's realm parameter), or nil.
    static func refusal(_ route: AdminRoute, caller: AdminCaller, realmID: String?) -> Refusal? {
        if let realmID, !caller.scope.includes(realmID) { return .realmOutsideScope }
        if route.reach == .allRealmsOnly, caller.scope != .allRealms { return .needsAllRealms }
        if route.writes, caller.role != .admin { return .readOnlyRole }
        return nil
    }

    /// Audited refusals per admin token: 100 per hour. A console user who clicks a button they
    /// may not use is refused a handful of times, and a probe shows its pattern well within
    /// 100; beyond that each further audit row would only say the same again, and a token
    /// refused in a loop (2,000 rows in under a second before this bound) could otherwise
    /// fill the table. So one token adds at most 2,400 rows a day; every refusal past the bound
    /// is still refused the same way and logged (`admin_denied`, then `admin_denied_audit_skipped`).
    /// Counted in `request_windows` in the audit entry's own transaction, so exact across nodes.
    static let auditedDenials = RequestLimit(requests: 100, windowSeconds: 3600)

    /// Nothing when the call is allowed; else records the refusal (see the type) and throws its error.
    func check(_ route: AdminRoute, caller: AdminCaller, request: HTTPRequest) async throws {
        let realmID = route.realmParameter.map { request.parameter($0) }
        guard let refusal = Self.refusal(route, caller: caller, realmID: realmID) else { return }
        logger.info("admin_denied", ["actor": .string(caller.actor), "route": .string("\(route.method) \(route.template)"),
                                     "reason": .string(refusal.rawValue), "requestId": .string(request.requestID)])
        // Never the caller's `X-Change-Reason`: a refused caller's free text has no place in
        // anyone's audit (it was how a viewer planted text in other realms' logs).
        let context = try ChangeContext(actor: caller.actor)
        let at = now().unixSeconds
        // Filed under the route's realm only when the token may see that realm and its id is
        // well-formed; anything else is kept in the path alone, under no realm.
        let scopedRealm = realmID.flatMap { caller.scope.includes($0) && InputRules.realmIDProblem($0) == nil ? $0 : nil }
        let target = String(request.path.prefix(Self.maxRecordedPathLength))
        let changes = ["method": FieldChange(before: .null, after: .string(route.method)),
                       "reason": FieldChange(before: .null, after: .string(refusal.rawValue))]
        // READ COMMITTED on PostgreSQL, as every other count of the request limiter: the count
        // is one atomic upsert, and the realm is read only to file the entry. Under
        // SERIALIZABLE one token's refusals sent in parallel made each other run again.
        let audited = try await database.write(isolation: .readCommitted) { db -> Bool in
            guard try RequestRateLimiter.countAuditedDenial(db, actor: caller.actor, at: at) else { return false }
            // A realm that does not exist (yet) gets nothing: one created later under its id
            // must not start with entries written before it.
            let recordedRealm = try scopedRealm.flatMap { try RealmStore.load(db, id: $0) == nil ? nil : $0 }
            try AuditLog.record(db, at: at, context: context, action: "admin.denied", target: target,
                                realmID: recordedRealm, changes: changes)
            return true
        }
        if !audited {
            // The token is over `auditedDenials`: the refusal is only in the log line above.
            let limit = "\(Self.auditedDenials.requests) per \(Self.auditedDenials.windowSeconds) s"
            logger.warning("admin_denied_audit_skipped", ["actor": .string(caller.actor), "limit": .string(limit),
                                                          "requestId": .string(request.requestID)])
        }
        throw refusal.error
    }
}
