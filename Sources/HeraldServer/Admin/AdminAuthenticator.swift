import Foundation
import HTTPServer
import Realms

/// Checks the `Authorization: Bearer` admin token before anything else about the request is
/// looked at, so a caller without a valid token learns nothing (not even whether a realm exists).
/// Wrong tokens are counted per client IP; once the window is full every admin request from
/// that IP gets 429, a right token included, so a guess that happens to be right cannot be told
/// from a wrong one while the limit holds.
struct AdminAuthenticator: Sendable {
    let tokens: AdminTokenStore
    let limiter: RequestRateLimiter
    let clientAddresses: ClientAddressResolver

    /// The caller; 401 `unauthorized` for a missing, malformed or unknown token; 429
    /// `rate_limited` (with `Retry-After`) while the client IP's failure window is full.
    func authenticate(_ request: HTTPRequest) async throws -> AdminCaller {
        let clientIP = clientAddresses.clientAddress(of: request)
        if let retryAfter = try await limiter.adminFailureRefusal(clientIP: clientIP) {
            throw APIError.rateLimited(retryAfter: retryAfter)
        }
        guard let header = request.headers["Authorization"] else { throw APIError.unauthorized }
        guard let presented = BearerAuthorization.token(header), let token = try await tokens.token(presented: presented) else {
            // Only a presented credential is a guess worth counting; a request without one
            // (a console's first probe) is not.
            if let retryAfter = try await limiter.countAdminFailure(clientIP: clientIP) {
                throw APIError.rateLimited(retryAfter: retryAfter)
            }
            throw APIError.unauthorized
        }
        return AdminCaller(token)
    }
}
