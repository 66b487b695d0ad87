import JOSE

/// libFuzzer entry point for `JWKSet.parse` (and through it JWK decoding and OpenSSL key
/// import): arbitrary bytes as a provider's JWKS document. Every key accepted must export
/// to a JWK that imports again as the same key type.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJWKS(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    guard let set = try? JWKSet.parse(bytes) else { return 0 }
    precondition(set.skippedCount >= 0, "negative skipped count")
    for (kid, key) in set.keys {
        let exported = key.jwk(keyID: kid)
        guard let again = try? exported.publicKey() else { fatalError("an accepted key does not re-import from its JWK") }
        precondition(again.keyType == key.keyType, "re-imported key has another type")
        // The exported document must itself parse to the same key ids.
        let document = JWKSet.document([exported])
        guard let reparsed = try? JWKSet.parse(document), reparsed.keys[kid] != nil else {
            fatalError("an exported JWKS document does not parse again")
        }
    }
    return 0
}
