import HTTPServer
import JOSE

/// Renders an `APIError` as the contract's JSON error envelope.
enum ErrorEnvelope {
    static func response(_ error: APIError, requestID: String) -> HTTPResponse {
        var object: [String: JSONValue] = [
            "status": .number(Double(error.status)),
            "code": .string(error.code),
            "message": .string(error.message),
            "requestId": .string(requestID),
        ]
        if let details = error.details { object["details"] = .object(details) }
        var response = HTTPResponse.json(status: error.status, JSONValue.object(object))
        for (name, value) in error.headers { response.headers.set(name, value) }
        return response
    }
}
