import HTTPServer
import Realms
import TokenIssuer

/// `/api/admin/realms/:realm/accounts/:account/sessions`: list an account's sessions, revoke all.
struct SessionAdminHandlers: Sendable {
    let stores: AdminStores

    var routes: [AdminRoute] {
        [
            AdminRoute("GET", "/api/admin/realms/:realm/accounts/:account/sessions", list),
            AdminRoute("DELETE", "/api/admin/realms/:realm/accounts/:account/sessions", revokeAll),
        ]
    }

    func list(_ request: HTTPRequest, _ caller: AdminCaller) async throws -> HTTPResponse {
        let (realmID, accountID) = try await account(request)
        return .json(ListResponse(Page(items: try await stores.sessions.list(realmID: realmID, accountID: accountID),
                                       nextCursor: nil)))
    }

    /// Revokes every live session of the account, audited as `account.sessions.revoke`.
    func revokeAll(_ request: HTTPRequest, _ caller: AdminCaller) async throws -> HTTPResponse {
        let context = try caller.changeContext(request)
        let (realmID, accountID) = try await account(request)
        let revoker = stores.sessionRevoker
        let at = stores.now().unixSeconds
        try await stores.database.write { db in
            try revoker.revokeSessions(realmID: realmID, accountID: accountID, in: db)
            try AuditLog.record(db, at: at, context: context, action: "account.sessions.revoke",
                                target: "realms/\(realmID)/accounts/\(accountID)/sessions", realmID: realmID, changes: [:])
        }
        return .noContent
    }

    /// The realm and account of the path; 404 when either is unknown.
    private func account(_ request: HTTPRequest) async throws -> (String, String) {
        let realmID = request.parameter("realm")
        let accountID = try AccountAdminHandlers.accountID(request)
        guard try await stores.realms.realm(realmID) != nil else { throw RealmsError.notFound("realm") }
        guard try await stores.accounts.account(realmID: realmID, id: accountID) != nil else {
            throw RealmsError.notFound("account")
        }
        return (realmID, accountID)
    }
}
