import HTTPServer
import Storage

/// Adapts a throwing Herald handler to the HTTP layer: an `APIError` becomes the error
/// envelope; a database that is unreachable right now answers 503 with `Retry-After` (the
/// client did nothing wrong and nothing changed); any other error is logged (type only — its
/// text may quote input) and answered 500 without internals.
struct Endpoint {
    let logger: Logger

    func handler(_ body: @escaping @Sendable (HTTPRequest) async throws -> HTTPResponse) -> HTTPHandler {
        let logger = self.logger
        return { request in
            do {
                return try await body(request)
            } catch let error as APIError {
                return ErrorEnvelope.response(error, requestID: request.requestID)
            } catch let error as StorageError where error.isTemporary {
                logger.warning("storage_unavailable", ["route": .string(request.routeTemplate ?? "unmatched"),
                                                       "requestId": .string(request.requestID),
                                                       "cause": .string(error.cause)])
                return ErrorEnvelope.response(.storageUnavailable, requestID: request.requestID)
            } catch {
                logger.error("unhandled_error", ["route": .string(request.routeTemplate ?? "unmatched"),
                                                 "requestId": .string(request.requestID),
                                                 "errorType": .string(String(describing: type(of: error)))])
                return ErrorEnvelope.response(.internalError, requestID: request.requestID)
            }
        }
    }
}
