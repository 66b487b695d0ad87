import JOSE

/// The report `herald diagnose <provider>-token` prints, the same shape for every provider:
/// `{"checks":[…],"claims":…,"header":…,"reason":…,"verdict":…}`, written by JOSE's one JSON
/// writer (sorted keys), indented two spaces for a terminal.
public enum TokenDiagnosisJSON {
    public static func render(header: [String: JSONValue]?, claims: [String: JSONValue]?, checks: [JSONValue],
                              verdict: String, reason: String?) -> String {
        let root: JSONValue = .object([
            "header": header.map(JSONValue.object) ?? .null,
            "claims": claims.map(JSONValue.object) ?? .null,
            "checks": .array(checks),
            "verdict": .string(verdict),
            "reason": reason.map(JSONValue.string) ?? .null,
        ])
        return String(decoding: root.serialized(indentedBy: 2), as: UTF8.self)
    }
}
