import Foundation
import JOSE
import Realms
import TokenIssuer
import Storage
@testable import HeraldServer

/// Admin API calls against a running Herald, authenticated with the environment token.
extension RunningHerald {
    /// Sends an admin request with a JSON body; `token: nil` sends no credentials.
    func admin(_ method: String, _ path: String, json: JSONValue? = nil, reason: String? = nil,
               token: String? = RunningHerald.adminToken) async throws -> TestHTTPClient.Response {
        var headers: [(String, String)] = []
        if let token { headers.append(("Authorization", "Bearer \(token)")) }
        if let reason { headers.append(("X-Change-Reason", reason)) }
        guard let json else { return try await send(method, path, headers: headers) }
        headers.append(("Content-Type", "application/json"))
        return try await send(method, path, headers: headers, body: Array(try JSONEncoder().encode(json)))
    }

    /// Sends raw body bytes as JSON to an admin route.
    func admin(_ method: String, _ path: String, rawBody: String) async throws -> TestHTTPClient.Response {
        try await send(method, path, headers: [("Authorization", "Bearer \(RunningHerald.adminToken)"),
                                               ("Content-Type", "application/json")], body: Array(rawBody.utf8))
    }

    /// Creates a realm through the API and returns its JSON.
    @discardableResult
    func createRealm(_ id: String, _ fields: [String: JSONValue] = [:]) async throws -> [String: JSONValue] {
        var body = fields
        body["id"] = .string(id)
        let response = try await admin("POST", "/api/admin/realms", json: .object(body))
        guard response.status == 201 else { throw TestClientError("creating realm \(id): \(response.status) \(response.text)") }
        return response.json
    }

    /// The account store of the server's database (accounts are created by login, not the admin API).
    var accounts: AccountStore {
        AccountStore(database: application.services.database, sessionRevoker: SessionRevoker(now: application.services.now),
                     deletionHook: application.services.appleTokens, now: application.services.now)
    }
}

extension TestHTTPClient.Response {
    /// `details.fields` of an error envelope, by field name.
    var fieldProblems: [String: String] {
        (json["details"]?["fields"]?.objectValue ?? [:]).compactMapValues(\.stringValue)
    }

    /// The `items` of a list response.
    var items: [JSONValue] { json["items"]?.arrayValue ?? [] }
}

/// A PKCS#8 PEM, as Apple's .p8 files are.
func pemText(_ key: PrivateKey) throws -> String {
    let base64 = Data(try key.pkcs8DER()).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
    return "-----BEGIN PRIVATE KEY-----\n\(base64)\n-----END PRIVATE KEY-----\n"
}
