import Login
import Testing

/// How a refused login is logged and counted is `LoginError`'s to say, the same for every door.
@Suite("LoginError: outages, counted failures and a resolved client")
struct LoginErrorClassificationTests {
    /// Every code, so a new one shows up here.
    static let allCodes: [LoginError.Code] = [
        .badRequest, .realmNotFound, .providerNotConfigured, .unknownClient, .clientNotAllowed, .tokenTooLarge,
        .invalidIdentityToken, .providerUnavailable, .registrationDisabled, .accountDisabled, .invalidDownstreamState,
        .rateLimited, .serviceUnavailable, .internalFailure,
    ]

    @Test("outages are ours or the provider's: the database, our own failure, the provider's keys")
    func outages() {
        let outages = Self.allCodes.filter { LoginError($0).isOutage }
        #expect(outages == [.providerUnavailable, .serviceUnavailable, .internalFailure])
    }

    @Test("every refusal the caller caused counts against the limit; outages, the limit itself and a missing realm do not")
    func countedFailures() {
        let uncounted = Self.allCodes.filter { !LoginError($0).countsAsFailure }
        #expect(uncounted == [.realmNotFound, .providerUnavailable, .rateLimited, .serviceUnavailable, .internalFailure])
        #expect(Self.allCodes.allSatisfy { !LoginError($0).isOutage || !LoginError($0).countsAsFailure })
    }

    @Test("the client id may be logged only for refusals decided after the client was found")
    func resolvedClient() {
        let resolved = Self.allCodes.filter { LoginError($0).clientResolved }
        #expect(resolved == [.clientNotAllowed, .invalidIdentityToken, .providerUnavailable, .registrationDisabled,
                             .accountDisabled, .invalidDownstreamState])
    }
}
