import Grants
import HTTPServer
import Login
import Realms

extension WebSignInStart {
    /// A web sign-in's start route query, for every provider: `clientId`, and optionally
    /// `downstreamState` (branch B) and `returnTo` (where the app wants the result), each given
    /// at most once and bounded.
    init(query request: HTTPRequest) throws {
        var values: [String: String] = [:]
        for (name, value) in request.queryItems() {
            guard values[name] == nil else { throw APIError.invalidFields([String(name.prefix(64)): "is repeated"]) }
            values[name] = value
        }
        guard let clientID = values["clientId"], !clientID.isEmpty, clientID.utf8.count <= 128 else {
            throw APIError.invalidFields(["clientId": "is required (at most 128 characters)"])
        }
        let downstream = values["downstreamState"].flatMap { $0.isEmpty ? nil : $0 }
        let maxDownstream = DownstreamAuthorizations.maximumDownstreamStateLength
        if let downstream, downstream.utf8.count > maxDownstream {
            throw APIError.invalidFields(["downstreamState": "must be at most \(maxDownstream) characters"])
        }
        let returnTo = values["returnTo"].flatMap { $0.isEmpty ? nil : $0 }
        if let returnTo, returnTo.utf8.count > InputRules.maxURLLength {
            throw APIError.invalidFields(["returnTo": "must be at most \(InputRules.maxURLLength) characters"])
        }
        let realmID = request.parameter("realm")
        guard InputRules.isSlug(realmID) else { throw APIError.notFound("Realm") }
        self.init(realmID: realmID, clientID: clientID, downstreamState: downstream, returnTo: returnTo)
    }
}
