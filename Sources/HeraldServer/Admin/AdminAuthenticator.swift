import Foundation
import HTTPServer
import Realms

/// Checks the `Authorization: Bearer` admin token before anything else about the request is
/// looked at, so a caller without a valid token learns nothing (not even whether a realm exists).
/// Wrong tokens are counted per client IP; once the window is full, wrong tokens (and requests
/// without one) from that IP get 429 without being looked at any further. The right token still
/// gets in: admin tokens carry at least 256 bits, so a right one is never a guess, and refusing
/// it would let anyone behind the same NAT or proxy lock the operators out. Its admission over
/// the limit is logged with the token's name, so an operator sees who got in during a flood.
struct AdminAuthenticator: Sendable {
    let tokens: AdminTokenStore
    let limiter: RequestRateLimiter
    let clientAddresses: ClientAddressResolver
    let logger: Logger

    /// The caller; 401 `unauthorized` for a missing, malformed or unknown token; 429
    /// `rate_limited` (with `Retry-After`) for a missing or wrong one while the client IP's
    /// failure window is full.
    func authenticate(_ request: HTTPRequest) async throws -> AdminCaller {
        let clientIP = clientAddresses.clientAddress(of: request)
        let overLimit = try await limiter.adminFailureRefusal(clientIP: clientIP)
        guard let header = request.headers["Authorization"] else {
            if let overLimit { throw APIError.rateLimited(retryAfter: overLimit) }
            throw APIError.unauthorized
        }
        guard let presented = BearerAuthorization.token(header), let token = try await tokens.token(presented: presented) else {
            // The window is full: a further wrong token is refused, and need not be counted.
            if let overLimit { throw APIError.rateLimited(retryAfter: overLimit) }
            // Only a presented credential is a guess worth counting; a request without one
            // (a console's first probe) is not.
            if let retryAfter = try await limiter.countAdminFailure(clientIP: clientIP) {
                throw APIError.rateLimited(retryAfter: retryAfter)
            }
            throw APIError.unauthorized
        }
        if overLimit != nil {
            // The token's name only, never the token (nor the address: the event says it is over).
            logger.warning("admin_authenticated_over_failure_limit", ["actor": .string(token.name),
                                                                      "requestId": .string(request.requestID)])
        }
        return AdminCaller(token)
    }
}
