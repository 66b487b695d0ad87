import Foundation
import Grants
import HeraldApple
import Storage

/// Plugs Grants' branch B into native login, inside the login's write transaction: a state
/// Grants refuses becomes `invalid_downstream_state` (the login's account changes roll back
/// with it); storage errors pass unchanged, so the login's transaction rolls back as a whole
/// (503 while the database is unreachable, else 500).
enum DownstreamCompletion {
    static func completer(database: any Database, now: @escaping @Sendable () -> Date) -> DownstreamCompleter {
        let authorizations = DownstreamAuthorizations(database: database, now: now)
        return { db, request in
            do {
                return try authorizations.completeDownstream(
                    in: db, realmID: request.realmID, issuer: request.issuer, clientID: request.clientID,
                    downstreamState: request.downstreamState, accountID: request.accountID, authTime: request.authTime)
            } catch let error as GrantsError where error.code == .invalidDownstreamState {
                throw NativeLoginError(.invalidDownstreamState)
            }
        }
    }
}
