import Realms

extension APIError {
    /// The envelope for a Realms error: 400 naming each field, 404, or 409.
    init(_ error: RealmsError) {
        switch error.code {
        case .invalidInput:
            self = .invalidFields(Dictionary(error.fieldIssues.map { ($0.field, $0.reason) }, uniquingKeysWith: { first, _ in first }))
        case .notFound:
            self = APIError(status: 404, code: "not_found", message: error.message)
        case .conflict:
            self = .conflict(error.message)
        }
    }
}
