import JOSE
import Realms

/// `GET /me`: the account with its linked providers. Also the `user` of first-party login and
/// refresh responses, so both are written by this one encoder and cannot drift apart.
/// Built as a `JSONValue` (written by JOSE's `JSONWriter`), not through `JSONEncoder`: this is
/// on every login and refresh, where Foundation's encoder was several per cent of the CPU.
struct MeResponse: Sendable {
    let profile: AccountProfile

    init(_ profile: AccountProfile) { self.profile = profile }

    var json: JSONValue {
        let account = profile.account
        return [
            "id": .string(account.id), "email": .string(account.email), "emailVerified": .bool(account.emailVerified),
            "isPrivateEmail": .bool(account.isPrivateEmail), "name": account.name.json,
            "picture": account.pictureURL.map(JSONValue.string) ?? .null,
            "status": .string(account.status.rawValue), "createdAt": .number(Double(account.createdAt)),
            "identities": .array(profile.identities.map { identity in
                ["provider": .string(identity.provider), "linkedAt": .number(Double(identity.linkedAt))]
            }),
        ]
    }
}
