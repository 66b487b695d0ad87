import HeraldApple
import Realms

/// The one way HeraldServer deletes an account, for the admin `DELETE …/accounts/{id}` and the
/// owner's `DELETE /api/auth/{realm}/me`: `AccountStore` frees the email, unlinks the
/// identities, ends every session, queues the Apple tokens' revocation (its deletion hook, the
/// vault) and records the event in one transaction; after the commit the Apple work is woken,
/// so the revocation is made now, without holding up the answer (and retried on failure).
struct AccountDeletions: Sendable {
    let accounts: AccountStore
    let appleTokens: AppleTokenVault

    /// Deletes the account, or answers what the deletion that already did it recorded.
    /// Throws `notFound` (realm or account).
    func delete(realmID: String, accountID: String, by requester: AccountDeletionRequester) async throws -> AccountDeletion {
        let deletion = try await accounts.delete(realmID: realmID, id: accountID, by: requester)
        if deletion.deletedNow { appleTokens.revocationsQueued() }
        return deletion
    }
}
