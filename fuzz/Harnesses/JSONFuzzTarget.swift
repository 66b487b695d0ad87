import JOSE

/// libFuzzer entry point for `JSONValue.parse`, the strict parser under every JWS header,
/// payload, JWKS and request body. Beyond "never crashes", a parsed value must survive a
/// serialize → parse round trip unchanged (the writer and the parser agree).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    guard let value = try? JSONValue.parse(bytes) else { return 0 }
    let written = value.serialized()
    guard let reparsed = try? JSONValue.parse(written) else {
        fatalError("serialized JSON does not parse again")
    }
    // Numbers are written in shortest round-trip form, so equality is exact.
    precondition(reparsed == value, "JSON round trip changed the value")
    precondition(reparsed.serialized() == written, "JSON serialization is not stable")
    return 0
}
