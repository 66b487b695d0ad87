import Foundation
import Grants
import HeraldApple
import Storage

/// Plugs Grants' branch B into native login: a state Grants refuses becomes
/// `invalid_downstream_state`, an unreachable database `service_unavailable` (503); anything
/// else is an internal failure (500).
enum DownstreamCompletion {
    static func completer(database: any Database, now: @escaping @Sendable () -> Date) -> DownstreamCompleter {
        let authorizations = DownstreamAuthorizations(database: database, now: now)
        return { request in
            do {
                return try await authorizations.completeDownstream(
                    realmID: request.realmID, issuer: request.issuer, clientID: request.clientID, state: request.state,
                    accountID: request.accountID, authTime: request.authTime)
            } catch let error as GrantsError where error.code == .invalidDownstreamState {
                throw NativeLoginError(.invalidDownstreamState)
            } catch let error as GrantsError where error.code == .temporarilyUnavailable {
                throw NativeLoginError(.serviceUnavailable)
            }
        }
    }
}
