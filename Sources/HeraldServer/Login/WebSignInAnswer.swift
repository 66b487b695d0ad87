import HTTPServer
import JOSE
import Login

/// The result pages every web sign-in (Apple's, Google's) ends on for the same outcomes, so
/// both doors answer alike: the same codes, messages and links.
enum WebSignInAnswer {
    /// No sign-in of this browser waits for the answer.
    static let invalidState = page(400, ["status": "error", "code": "invalid_state",
                                         "message": "This sign-in is unknown, expired, already finished or was begun in another browser; start again"],
                                   title: "Sign-in expired")

    /// The answer came without the browser's binding cookie.
    static let noBrowserBinding = page(400, ["status": "error", "code": "invalid_state",
                                             "message": "This browser did not begin this sign-in (or blocked its cookie); start again"],
                                       title: "Sign-in expired")

    /// The client dropped the `returnTo` the sign-in began with.
    static let returnToWithdrawn = page(400, ["status": "error", "code": "invalid_return_to",
                                              "message": "The app no longer accepts this sign-in's return address; start again"],
                                        title: "Sign-in failed")

    /// A request the provider would not have sent.
    static func badRequest(_ message: String) -> HTTPResponse {
        page(400, ["status": "error", "code": "bad_request", "message": .string(message)], title: "Sign-in failed")
    }

    /// The login pipeline's refusal, in the error envelope's words.
    static func loginFailed(_ error: LoginError, returnTo: String?, provider: LoginProvider) -> HTTPResponse {
        let envelope = APIError(error, provider: provider)
        var result: [String: JSONValue] = ["status": "error", "code": .string(envelope.code),
                                           "message": .string(envelope.message)]
        if let details = envelope.details { result["details"] = .object(details) }
        return page(envelope.status, result, link: returnTo, title: "Sign-in failed")
    }

    /// Branch B: the third party's redirect with its code. Branch A: the tokens, and the app's
    /// `returnTo` with the result in the fragment.
    static func loggedIn(_ login: LoginResult, returnTo: String?) throws -> HTTPResponse {
        switch login.branch {
        case .downstream(let redirectURI):
            return page(200, ["status": "success", "redirectUri": .string(redirectURI)], link: redirectURI,
                        title: "Signed in")
        case .session(let tokens):
            let response = try SessionTokensResponse(message: "Login successful", tokens: tokens, isNewUser: login.isNewUser)
            // Read back from the one writer of this answer (a web sign-in is not the hot path).
            guard case .object(var result)? = try? JSONValue.parse(response.body) else { throw APIError.internalError }
            result["status"] = "success"
            let link = returnTo.map { $0 + "#herald-login-result=" + Base64URL.encode(JSONValue.object(result).serialized()) }
            return page(200, result, link: link, title: "Signed in")
        }
    }

    static func page(_ status: Int, _ result: [String: JSONValue], link: String? = nil, title: String) -> HTTPResponse {
        LoginResultPage(status: status, result: result, link: link, title: title).response
    }
}
