import Foundation
import HTTPServer
import Realms

/// The authenticated admin behind a request: the token's name is the audit actor.
struct AdminCaller: Sendable {
    let actor: String

    /// The audit context of a change: the actor and the request's `X-Change-Reason`.
    /// Throws a 400 naming `X-Change-Reason` when it is too long or holds control characters.
    func changeContext(_ request: HTTPRequest) throws(RealmsError) -> ChangeContext {
        try ChangeContext(actor: actor, reason: request.headers["X-Change-Reason"])
    }
}

/// Checks the `Authorization: Bearer` admin token before anything else about the request is
/// looked at, so a caller without a valid token learns nothing (not even whether a realm exists).
struct AdminAuthenticator: Sendable {
    let tokens: AdminTokenStore

    /// The caller, or 401 `unauthorized` for a missing, malformed or unknown token.
    func authenticate(_ request: HTTPRequest) async throws -> AdminCaller {
        guard let header = request.headers["Authorization"], let token = Self.bearerToken(header),
              let actor = try await tokens.authenticate(token)
        else { throw APIError.unauthorized }
        return AdminCaller(actor: actor)
    }

    /// The token of a `Bearer` credential (scheme case-insensitive, RFC 6750 §2.1).
    static func bearerToken(_ header: String) -> String? {
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = parts[1].trimmingCharacters(in: .whitespaces)
        return token.isEmpty ? nil : token
    }
}
