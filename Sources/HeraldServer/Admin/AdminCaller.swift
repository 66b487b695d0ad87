import Foundation
import HTTPServer
import Realms

/// The authenticated admin behind a request: the token's name (the audit actor), role and scope.
struct AdminCaller: Sendable {
    let actor: String
    let role: AdminRole
    let scope: AdminScope

    init(actor: String, role: AdminRole = .admin, scope: AdminScope = .allRealms) {
        self.actor = actor
        self.role = role
        self.scope = scope
    }

    init(_ token: AdminToken) {
        self.init(actor: token.name, role: token.role, scope: token.scope)
    }

    /// The realms lists are narrowed to; nil for an all-realms token.
    var visibleRealms: Set<String>? { scope.realmIDs }

    /// The audit context of a change: the actor and the request's `X-Change-Reason`.
    /// Throws a 400 naming `X-Change-Reason` when it is too long or holds control characters.
    func changeContext(_ request: HTTPRequest) throws(RealmsError) -> ChangeContext {
        try ChangeContext(actor: actor, reason: request.headers["X-Change-Reason"])
    }
}
