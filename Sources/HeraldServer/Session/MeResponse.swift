import JOSE
import Realms

/// `GET /me`: the account with its linked providers. Also the `user` of first-party login and
/// refresh responses, so both are written by this one encoder and cannot drift apart.
/// Written member by member (`JSONObjectWriter`), not through `JSONEncoder` nor a `JSONValue`
/// dictionary: this is on every login and refresh, where Foundation's encoder was several per
/// cent of the CPU and building, hashing and sorting dictionaries about one more.
struct MeResponse: Sendable {
    let profile: AccountProfile

    init(_ profile: AccountProfile) { self.profile = profile }

    /// The JSON body.
    var body: [UInt8] {
        var writer = JSONObjectWriter()
        writeMembers(to: &writer)
        return writer.finish()
    }

    /// The members, in ascending key order (the writer's rule).
    func writeMembers(to writer: inout JSONObjectWriter) {
        let account = profile.account
        writer.add("createdAt", account.createdAt)
        writer.add("email", account.email)
        writer.add("emailVerified", account.emailVerified)
        writer.add("id", account.id)
        let identities = profile.identities
        writer.addArray("identities", count: identities.count) { identity, index in
            identity.add("linkedAt", identities[index].linkedAt)
            identity.add("provider", identities[index].provider)
        }
        writer.add("isPrivateEmail", account.isPrivateEmail)
        writer.add("name", account.name.json)
        writer.add("picture", account.pictureURL)
        writer.add("status", account.status.rawValue)
    }
}
