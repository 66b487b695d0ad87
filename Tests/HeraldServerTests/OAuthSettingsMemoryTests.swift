import Grants
import Realms
import Testing
@testable import HeraldServer

/// What a node remembers of an OAuth request's client is handed back only for the same credentials
/// under the same realm stamp (the two-node behaviour is in `TwoNodeTests`).
@Suite("OAuth settings memory")
struct OAuthSettingsMemoryTests {
    private let client = ClientApp(realmId: "acme", clientId: "backend", name: "Backend", createdAt: 0)

    private func credentials(_ secret: String?) -> ClientCredentials {
        ClientCredentials(clientID: "backend", secret: secret, method: secret == nil ? .none : .basic)
    }

    @Test("a remembered client needs the same secret, or none for a public client, and the same stamp")
    func clientMatchesOnlyItsCredentialsAndStamp() {
        let memory = OAuthSettingsMemory()
        memory.remember(client, authenticatedBy: credentials("s3cret"), realmID: "acme", stamp: "v1")
        #expect(memory.client(realmID: "acme", credentials("s3cret"), stamp: "v1")?.clientId == "backend")
        #expect(memory.client(realmID: "acme", credentials("other"), stamp: "v1") == nil)
        #expect(memory.client(realmID: "acme", credentials(nil), stamp: "v1") == nil)
        #expect(memory.client(realmID: "acme", credentials("s3cret"), stamp: "v2") == nil)
        #expect(memory.client(realmID: "other", credentials("s3cret"), stamp: "v1") == nil)

        memory.remember(client, authenticatedBy: credentials(nil), realmID: "acme", stamp: "v1")
        #expect(memory.client(realmID: "acme", credentials(nil), stamp: "v1") != nil)
        #expect(memory.client(realmID: "acme", credentials("s3cret"), stamp: "v1") == nil)
    }

    @Test("a client remembered for a request that only named it is found again under its stamp, and is never an authenticated one")
    func namedClientIsNoAuthentication() async throws {
        let memory = OAuthSettingsMemory()
        let client = self.client
        #expect(try await memory.namedClient(realmID: "acme", clientID: "backend", stamp: "v1") { client }?.clientId == "backend")
        let again = try await memory.namedClient(realmID: "acme", clientID: "backend", stamp: "v1") {
            Issue.record("read again under the stamp it was remembered with")
            return nil
        }
        #expect(again?.clientId == "backend")
        #expect(try await memory.namedClient(realmID: "acme", clientID: "backend", stamp: "v2") { nil } == nil)
        #expect(memory.client(realmID: "acme", credentials(nil), stamp: "v1") == nil)
        #expect(memory.client(realmID: "acme", credentials("s3cret"), stamp: "v1") == nil)
    }
}
