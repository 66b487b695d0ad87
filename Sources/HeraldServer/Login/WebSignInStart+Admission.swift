import HTTPServer
import Login

extension RequestRateLimiter {
    /// Counts one web sign-in start at `endpoint`, per client address and per client, like
    /// `/authorize` (each start keeps a row for ten minutes, valid or not); over the limit it
    /// logs and throws 429.
    func admit(_ start: WebSignInStart, endpoint: Endpoint, request: HTTPRequest, clientAddresses: ClientAddressResolver,
               logger: Logger) async throws {
        guard let retryAfter = try await admit(realmID: start.realmID, endpoint: endpoint,
                                               clientIP: clientAddresses.clientAddress(of: request),
                                               clientID: start.clientID) else { return }
        logger.info("rate_limited", ["realm": .string(start.realmID), "endpoint": .string(endpoint.rawValue),
                                     "requestId": .string(request.requestID)])
        throw APIError.tooManyRequests(retryAfter: retryAfter)
    }
}
