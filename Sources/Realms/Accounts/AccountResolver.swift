import Foundation
import Storage

/// Finds or creates the account of a provider login: open_id → verified email → create,
/// all in one write transaction. With the single writer and the identities primary key
/// (realm, provider, open_id), two concurrent first logins of one subject make one account.
public struct AccountResolver: Sendable {
    /// The domain of placeholder emails (`{sub}@apple.placeholder`).
    public static func placeholderDomain(provider: String) -> String { "\(provider).placeholder" }

    private let now: @Sendable () -> Date

    /// A resolver whose clock `now` stamps creations and links.
    public init(now: @escaping @Sendable () -> Date) {
        self.now = now
    }

    /// Resolves `claims` inside the caller's write transaction, so a login can commit the
    /// account together with what it does next (the replay claim and the session or code).
    /// `realm` is the realm as the caller loaded it for its pre-checks; its linking and
    /// registration policies decide here. Throws `AccountResolutionError` or a storage error;
    /// the caller's transaction decides what survives a throw.
    /// `identityAccountRows`: the rows of `lookupStatement(realmID:claims:)` when the caller
    /// already ran it in this transaction (sent with its other first statements); nil to read here.
    public func resolve(_ db: any SQLExecutor, realm: Realm, claims: ProviderIdentityClaims,
                        identityAccountRows: [Row]? = nil) throws -> AccountResolution {
        try Self.resolve(db, realm: realm, claims: Self.sanitized(claims), at: now().unixSeconds,
                         identityAccountRows: identityAccountRows)
    }

    /// What `resolve` reads first, the account of the identity with all its identities, for a
    /// login that sends it with other statements in one round trip (`SQLExecutor.queryBatch`):
    /// `AccountStore.profileStatement`, so a returning login needs no later read of its profile.
    public static func lookupStatement(realmID: String, claims: ProviderIdentityClaims) -> (sql: String, parameters: [SQLValue]) {
        AccountStore.profileStatement(realmID: realmID, provider: claims.provider, openID: claims.subject)
    }

    /// The resolution inside the caller's write transaction.
    private static func resolve(_ db: any SQLExecutor, realm: Realm, claims: ProviderIdentityClaims,
                                at: Int64, identityAccountRows: [Row]?) throws -> AccountResolution {
        let realmID = realm.id
        let email = claims.email.map(AccountStore.normalizedEmail)

        // 1. The identity is known (so is its realm: deleting a realm deletes its identities).
        let knownRows: [Row]
        if let identityAccountRows {
            knownRows = identityAccountRows
        } else {
            let lookup = lookupStatement(realmID: realmID, claims: claims)
            knownRows = try db.query(lookup.sql, lookup.parameters)
        }
        if let knownRow = knownRows.first {
            let account = try AccountStore.account(from: knownRow)
            switch account.status {
            case .active:
                let updated = try fillMissing(db, account: account, claims: claims, email: email, at: at)
                var identities = try AccountStore.linkedIdentities(fromRows: knownRows)
                // The identity learns the provider's email once: a returning login whose identity
                // has one sends no statement for it.
                if let email, try knownRow.optionalString("identity_email") == nil {
                    // Deferred, as the account's update: no answer is needed, so on PostgreSQL they
                    // travel with the login's next statement (a failure still fails the transaction).
                    try db.executeDeferred("""
                        UPDATE identities SET email = ? WHERE realm_id = ? AND provider = ? AND open_id = ? AND email IS NULL
                        """, .text(email), .text(realmID), .text(claims.provider), .text(claims.subject))
                    for index in identities.indices
                    where identities[index].provider == claims.provider && identities[index].openId == claims.subject {
                        identities[index].email = email
                    }
                }
                return AccountResolution(account: updated, isNewUser: false, linkedByEmail: false, identities: identities)
            case .disabled:
                throw AccountResolutionError(.accountDisabled)
            case .deleted:
                // Deletion unlinks identities; a leftover link must not revive the account.
                try db.execute("DELETE FROM identities WHERE realm_id = ? AND provider = ? AND open_id = ?",
                               .text(realmID), .text(claims.provider), .text(claims.subject))
            }
        }

        // Only a login without a usable identity needs the realm's policies (linking, registration).
        // 2. Link to an active account with the same verified email.
        let owner = try email.flatMap { try AccountStore.load(db, realmID: realmID, email: $0) }
        if let email, AccountStore.isLinkableEmail(email), let owner, claims.emailVerified,
           realm.emailLinking == .verified, owner.status == .active,
           owner.emailVerified {
            try AccountStore.link(db, Identity(realmId: realmID, provider: claims.provider, openId: claims.subject,
                                               accountId: owner.id, email: email, linkedAt: at))
            let updated = try fillMissing(db, account: owner, claims: claims, email: email, at: at)
            return AccountResolution(account: updated, isNewUser: false, linkedByEmail: true)
        }

        // 3. Create.
        guard realm.registrationEnabled else { throw AccountResolutionError(.registrationDisabled) }
        let new: NewAccount
        if let email, owner == nil {
            new = NewAccount(email: email, emailVerified: claims.emailVerified, isPrivateEmail: claims.isPrivateEmail,
                             name: claims.name, pictureURL: claims.picture)
        } else {
            // No email, or it belongs to an account we may not link: a unique placeholder keeps
            // the email column NOT NULL and unique; the provider's email stays on the identity.
            new = NewAccount(email: placeholder(claims), emailVerified: false, isPrivateEmail: false, name: claims.name,
                             pictureURL: claims.picture)
        }
        let account = try AccountStore.insert(db, realmID: realmID, new, at: at)
        try AccountStore.link(db, Identity(realmId: realmID, provider: claims.provider, openId: claims.subject,
                                           accountId: account.id, email: email, linkedAt: at))
        return AccountResolution(account: account, isNewUser: true, linkedByEmail: false)
    }

    /// A later login fills what the account lacks (name parts, a picture, a real email instead of
    /// the placeholder when that email is free); it never overwrites what is there.
    static func fillMissing(_ db: any SQLExecutor, account: Account, claims: ProviderIdentityClaims, email: String?,
                            at: Int64) throws -> Account {
        var updated = account
        if updated.name.givenName == nil { updated.name.givenName = claims.name.givenName }
        if updated.name.familyName == nil { updated.name.familyName = claims.name.familyName }
        if updated.name.displayName == nil { updated.name.displayName = claims.name.displayName }
        if updated.pictureURL == nil { updated.pictureURL = claims.picture }
        if let email, isPlaceholder(account.email), try AccountStore.load(db, realmID: account.realmId, email: email) == nil {
            updated.email = email
            updated.emailVerified = claims.emailVerified
            updated.isPrivateEmail = claims.isPrivateEmail
        }
        guard updated != account else { return account }
        updated.updatedAt = at
        try db.executeDeferred("""
            UPDATE accounts SET email = ?, email_verified = ?, is_private_email = ?, given_name = ?, family_name = ?,
                display_name = ?, picture_url = ?, updated_at = ?
            WHERE realm_id = ? AND id = ?
            """,
            .text(updated.email), SQLValue(updated.emailVerified), SQLValue(updated.isPrivateEmail),
            .optional(updated.name.givenName), .optional(updated.name.familyName), .optional(updated.name.displayName),
            .optional(updated.pictureURL), .integer(at), .text(account.realmId), .text(account.id))
        return updated
    }

    /// `{sub}@{provider}.placeholder`, lowercased like every stored email.
    static func placeholder(_ claims: ProviderIdentityClaims) -> String {
        AccountStore.normalizedEmail("\(claims.subject)@\(placeholderDomain(provider: claims.provider))")
    }

    /// Whether an email is a login placeholder (never deliverable; replaceable by a real one).
    public static func isPlaceholder(_ email: String) -> Bool { email.hasSuffix(".placeholder") }

    /// Drops name parts and emails that could not be stored (too long, control characters), and a
    /// picture that is not a plain https URL (`InputRules.pictureURLProblem`): silently, since a
    /// photo is never worth refusing a login.
    static func sanitized(_ claims: ProviderIdentityClaims) -> ProviderIdentityClaims {
        var result = claims
        func clean(_ part: String?) -> String? {
            guard let text = part?.trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty,
                  InputRules.textProblem(text) == nil else { return nil }
            return text
        }
        result.name = PersonName(givenName: clean(claims.name.givenName), familyName: clean(claims.name.familyName),
                                 displayName: clean(claims.name.displayName))
        if let email = claims.email, InputRules.emailProblem(email) != nil { result.email = nil }
        if let picture = claims.picture, InputRules.pictureURLProblem(picture) != nil { result.picture = nil }
        return result
    }
}
