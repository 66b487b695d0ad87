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
/// Every refusal is audited as `admin.denied` (actor = token name) with why, never a secret.
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

    /// Nothing when the call is allowed; else records the refusal and throws its error.
    func check(_ route: AdminRoute, caller: AdminCaller, request: HTTPRequest) async throws {
        let realmID = route.realmParameter.map { request.parameter($0) }
        guard let refusal = Self.refusal(route, caller: caller, realmID: realmID) else { return }
        logger.info("admin_denied", ["actor": .string(caller.actor), "route": .string("\(route.method) \(route.template)"),
                                     "reason": .string(refusal.rawValue), "requestId": .string(request.requestID)])
        // The change reason is kept when it is valid; an invalid one must not stop the record.
        let context: ChangeContext
        do { context = try caller.changeContext(request) } catch { context = try ChangeContext(actor: caller.actor) }
        let at = now().unixSeconds
        // Only a well-formed realm id is filed under its realm (so that realm's admins see the
        // attempt); anything else is kept in the path alone.
        let recordedRealm = realmID.flatMap { InputRules.realmIDProblem($0) == nil ? $0 : nil }
        let target = String(request.path.prefix(Self.maxRecordedPathLength))
        let changes = ["method": FieldChange(before: .null, after: .string(route.method)),
                       "reason": FieldChange(before: .null, after: .string(refusal.rawValue))]
        try await database.write { db in
            try AuditLog.record(db, at: at, context: context, action: "admin.denied", target: target,
                                realmID: recordedRealm, changes: changes)
        }
        throw refusal.error
    }
}
