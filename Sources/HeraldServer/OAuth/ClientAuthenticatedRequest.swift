import Grants
import HTTPServer

/// The start of every OAuth endpoint that checks a client secret (`/token`, `/introspect`,
/// `/revoke`): the body and the client's credentials, read after the request was counted
/// against the endpoint's own budget per client IP and per presented client id. Counting comes
/// before client authentication, so guessing secrets is limited wherever a secret is checked;
/// the price is that anyone presenting a client's id spends that client's budget.
struct ClientAuthenticatedRequest: Sendable {
    let body: OAuthRequestBody
    let credentials: ClientCredentials
    /// The resolved client address the request was counted under.
    let clientIP: String

    /// A request read and within its budget, or the 429 to answer.
    enum Admission: Sendable {
        case admitted(ClientAuthenticatedRequest)
        case limited(HTTPResponse)
    }

    /// Reads `request` and counts it at `endpoint`. An unreadable request costs its address a
    /// request too (no client was named), then its error is thrown (`invalid_request`, …).
    static func admit(_ request: HTTPRequest, realmID: String, endpoint: RequestRateLimiter.Endpoint,
                      limiter: RequestRateLimiter, clientAddresses: ClientAddressResolver,
                      logger: Logger) async throws -> Admission {
        let clientIP = clientAddresses.clientAddress(of: request)
        let body: OAuthRequestBody
        let credentials: ClientCredentials
        do {
            body = try OAuthRequestBody(request)
            credentials = try ClientCredentials.read(basic: try BasicAuthorization.credentials(request.headers["Authorization"]),
                                                     bodyClientID: body["client_id"], bodyClientSecret: body["client_secret"])
        } catch {
            if let limited = try await limited(request, realmID: realmID, endpoint: endpoint, clientIP: clientIP,
                                               clientID: nil, limiter: limiter, logger: logger) {
                return .limited(limited)
            }
            throw error
        }
        if let limited = try await limited(request, realmID: realmID, endpoint: endpoint, clientIP: clientIP,
                                           clientID: credentials.clientID, limiter: limiter, logger: logger) {
            return .limited(limited)
        }
        return .admitted(ClientAuthenticatedRequest(body: body, credentials: credentials, clientIP: clientIP))
    }

    /// Counts the request; the OAuth-style 429 to answer when it is over a limit, else nil.
    private static func limited(_ request: HTTPRequest, realmID: String, endpoint: RequestRateLimiter.Endpoint,
                                clientIP: String, clientID: String?, limiter: RequestRateLimiter,
                                logger: Logger) async throws -> HTTPResponse? {
        guard let retryAfter = try await limiter.admit(realmID: realmID, endpoint: endpoint,
                                                       clientIP: clientIP, clientID: clientID) else {
            return nil
        }
        logger.info("rate_limited", ["realm": .string(realmID), "endpoint": .string(endpoint.rawValue),
                                     "requestId": .string(request.requestID)])
        return OAuthErrorResponse.rateLimited(retryAfter: retryAfter)
    }
}
