import Realms
import Storage

/// What a realm accepts from Google, as plain values: the verifier's `Configuration`. The
/// realm's Google provider settings (stored by Realms) are mapped into it when read.
public struct GoogleRealmRequirements: Sendable, Equatable {
    /// The realm's OAuth client ids: `aud` must be one of them, and so must `azp` when present.
    /// Case-sensitive.
    public var clientIDs: Set<String>
    /// The Google Workspace domain `hd` must equal, when set; nil accepts any account.
    public var hostedDomain: String?

    /// Requirements for these client ids and hosted domain.
    public init(clientIDs: Set<String>, hostedDomain: String? = nil) {
        self.clientIDs = clientIDs
        self.hostedDomain = hostedDomain
    }
}

extension GoogleRealmRequirements {
    /// The realm's stored Google provider as requirements (the server's `RequirementsReader`):
    /// nil when the realm has none or it is disabled, so the login answers `provider_not_configured`.
    public static func stored(_ db: any SQLExecutor, realm: Realm) throws -> GoogleRealmRequirements? {
        guard let config = try GoogleProviderStore.load(db, realmID: realm.id), config.enabled else { return nil }
        return GoogleRealmRequirements(clientIDs: Set(config.clientIds), hostedDomain: config.hostedDomain)
    }
}
