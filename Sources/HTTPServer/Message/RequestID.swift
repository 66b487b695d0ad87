import Synchronization

/// Request ids as carried in `X-Request-Id`: a client's id is echoed only if it is short and
/// plain, so it can be logged and sent back without escaping.
public enum RequestID {
    /// The header that carries the id in both directions.
    public static let headerName = "X-Request-Id"

    /// Whether `candidate` matches `^[A-Za-z0-9._-]{1,128}$`.
    public static func isValid(_ candidate: String) -> Bool {
        let bytes = candidate.utf8
        guard !bytes.isEmpty, bytes.count <= 128 else { return false }
        return bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                true
            default:
                false
            }
        }
    }

    /// A fresh id: 32 lowercase hex digits, unique within the process and, through a random
    /// per-process prefix, across processes. Ids correlate log lines; they are not secrets.
    public static func generate() -> String {
        generator.next()
    }

    private static let generator = RequestIDGenerator()

    /// The incoming id when valid, else a generated one.
    static func resolve(incoming: String?) -> String {
        if let incoming, isValid(incoming) { return incoming }
        return generate()
    }
}

/// Makes request ids without a system call per id (the server makes one per request): a
/// random 64-bit prefix drawn once, then a counter passed through a keyed bijective mix,
/// so ids never repeat within the process and do not read as a sequence.
final class RequestIDGenerator: Sendable {
    private let prefix: UInt64
    private let key: UInt64
    private let counter = Atomic<UInt64>(0)

    init() {
        // The kernel CSPRNG (getrandom), once per process.
        var random = SystemRandomNumberGenerator()
        prefix = random.next()
        key = random.next()
    }

    func next() -> String {
        let count = counter.add(1, ordering: .relaxed).newValue
        return Self.hex(prefix, Self.mix(count &+ key))
    }

    /// MurmurHash3's 64-bit finalizer: a bijection, so distinct counts give distinct values.
    private static func mix(_ value: UInt64) -> UInt64 {
        var x = value
        x ^= x >> 33
        x &*= 0xff51_afd7_ed55_8ccd
        x ^= x >> 33
        x &*= 0xc4ce_b9fe_1a85_ec53
        x ^= x >> 33
        return x
    }

    private static func hex(_ high: UInt64, _ low: UInt64) -> String {
        String(unsafeUninitializedCapacity: 32) { buffer in
            let digits: StaticString = "0123456789abcdef"
            for (offset, word) in [(0, high), (16, low)] {
                for index in 0..<16 {
                    let nibble = Int((word >> (60 - 4 * UInt64(index))) & 0xF)
                    buffer[offset + index] = digits.utf8Start[nibble]
                }
            }
            return 32
        }
    }
}
