import Foundation
import Grants
import Testing
@testable import HeraldServer

@Suite("HTTP Basic client authentication")
struct BasicAuthorizationTests {
    @Test("Basic credentials are form-encoded inside the base64; another scheme is no client authentication")
    func decodesFormEncodedCredentials() throws {
        let encoded = Data("my%3Aclient:s%C3%A9cret+1".utf8).base64EncodedString()
        let basic = try #require(try BasicAuthorization.credentials("Basic \(encoded)"))
        #expect(basic.clientID == "my:client")
        #expect(basic.secret == "sécret 1")
        let publicClient = try #require(try BasicAuthorization.credentials("Basic \(Data("spa:".utf8).base64EncodedString())"))
        #expect(publicClient.clientID == "spa" && publicClient.secret.isEmpty)
        #expect(try BasicAuthorization.credentials("Bearer x") == nil)
        #expect(try BasicAuthorization.credentials(nil) == nil)
        #expect(throws: GrantsError.self) { try BasicAuthorization.credentials("Basic !!") }
        let badEscape = Data("client:100%".utf8).base64EncodedString()
        #expect(throws: GrantsError.self) { try BasicAuthorization.credentials("Basic \(badEscape)") }
        let noClient = Data(":secret".utf8).base64EncodedString()
        #expect(throws: GrantsError.self) { try BasicAuthorization.credentials("Basic \(noClient)") }
    }
}
