import Realms
import Storage

/// The provider-specific half of an identity-token login (Apple's today): reads the realm's
/// configuration of the provider and verifies a token against it. `IdentityTokenLogin` does
/// everything providers share around it (limits, replay, accounts, branch A or B).
public protocol IdentityTokenVerifier: Sendable {
    /// The realm's settings for this provider (its accepted audiences and the like).
    associatedtype Configuration: Sendable

    /// The provider name stored on identities, logged and counted (`apple`).
    static var provider: String { get }
    /// Identity tokens longer than this (in bytes) are refused before anything else is done.
    static var maximumTokenBytes: Int { get }

    /// The realm's enabled configuration of this provider, or nil when it has none or it is
    /// disabled. Read inside the login's pre-check read, in one reader turn with the realm,
    /// the failure count and the client.
    func enabledConfiguration(_ db: any SQLExecutor, realm: Realm) throws -> Configuration?

    /// Verifies `token` for `realm`, leaving its replay claim to the login's write transaction.
    /// Signature and key work finish here, before the login takes the writer.
    func verify(token: String, rawNonce: String?, realm: Realm, configuration: Configuration) async
        -> IdentityVerification
}
