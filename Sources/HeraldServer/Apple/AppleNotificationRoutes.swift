import Foundation
import Grants
import HTTPServer
import HeraldApple
import JOSE
import Realms

/// `POST /api/oauth/:realm/apple/notifications`: Apple's server-to-server notifications
/// (consent revoked, account deleted, relay email enabled or disabled). The body carries the
/// signed payload as `payload`, form-encoded (as Apple sends it) or in a JSON object. A
/// verified payload is answered 200 whether it changed anything or was a retry; one that fails
/// verification is 400 and changes nothing; an unreachable Apple JWKS is 503, so Apple retries.
/// One log line and one metric per notification — never the subject or an email.
struct AppleNotificationRoutes: RouteGroup {
    let inbox: AppleNotificationInbox
    let metrics: HeraldMetrics
    let logger: Logger

    func register(in router: inout Router, endpoint: Endpoint) {
        let routes = self
        router.add("POST", "/api/oauth/:realm/apple/notifications", endpoint.handler { request in
            try await routes.handle(request)
        })
    }

    func handle(_ request: HTTPRequest) async throws -> HTTPResponse {
        let payload = try Self.payload(request)
        let realmID = request.parameter("realm")
        let receipt = try await inbox.receive(payload: payload, realmID: realmID)
        let realmLabel = InputRules.isSlug(realmID) ? realmID : "invalid"
        func record(_ type: String, _ outcome: String) {
            metrics.recordAppleNotification(type: type, outcome: outcome)
            logger.info("apple_notification", ["realm": .string(realmLabel), "type": .string(type),
                                                       "outcome": .string(outcome), "requestId": .string(request.requestID)])
        }
        switch receipt {
        case .processed(let type, let outcome):
            record(type.label, outcome.rawValue)
            return .json(["type": type.label, "outcome": outcome.rawValue])
        case .rejected(let rejection):
            record("unverified", "rejected_\(rejection.reason)")
            throw APIError(status: 400, code: "invalid_notification",
                           message: "Apple notification rejected: \(rejection.reason)",
                           details: ["reason": .string(rejection.reason)])
        case .unavailable(let retryAfter):
            record("unverified", "apple_unavailable")
            throw APIError.serviceUnavailable(code: "apple_unavailable", retryAfter: retryAfter)
        case .realmNotFound:
            throw APIError.notFound("Realm")
        case .providerNotConfigured:
            throw APIError(status: 404, code: "provider_not_configured", message: "Apple provider not configured")
        }
    }

    /// The `payload` field, bounded like an identity token (longer is refused as too large).
    static func payload(_ request: HTTPRequest) throws(APIError) -> String {
        let media = request.mediaType
        let limit = AppleIdentityVerifier.maximumTokenBytes
        let missing = APIError.invalidFields(["payload": "required: the signed notification (a compact JWS) of at most \(limit) bytes"])
        if media == "application/json" {
            var body = try JSONRequestBody(request, allowedFields: ["payload"])
            let payload = body.string("payload", required: true, maxLength: limit)
            try body.validate()
            guard let payload else { throw missing }
            return payload
        }
        guard media == "application/x-www-form-urlencoded" else {
            throw APIError(status: 415, code: "unsupported_media_type",
                           message: "Content-Type must be application/x-www-form-urlencoded or application/json")
        }
        guard let pairs = FormDecoding.pairs(request.body) else { throw APIError.badRequest("Body is not valid form encoding") }
        let payloads = pairs.filter { $0.name == "payload" }
        guard payloads.count == 1, let payload = payloads.first?.value, !payload.isEmpty, payload.utf8.count <= limit,
              !payload.unicodeScalars.contains(where: { $0.value < 0x20 }) else { throw missing }
        return payload
    }
}
