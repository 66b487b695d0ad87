import Storage
import TokenIssuer

extension SessionStore {
    /// A session started in a write transaction of its own and its tokens signed: what a grant
    /// does inside its own transaction (`startSession(in:_:)`, then `issue(_:)`), for tests that
    /// need only the session.
    func startSession(_ request: SessionRequest, in database: any Database) async throws -> IssuedTokens {
        let prepared = try await database.write { db in try self.startSession(in: db, request, answer: .tokenEndpoint) }
        return try issue(prepared)
    }
}
