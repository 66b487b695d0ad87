import COpenSSL
import Synchronization

/// Cryptographically secure random bytes from OpenSSL's DRBG.
///
/// Small requests are served from a block drawn 4 KiB at a time: every `RAND_bytes` call has a
/// fixed cost of about 1.4 µs on this kind of machine (its fork check is a `getpid` system call,
/// then parameter lookups and locks) whatever its length, and a login asks for random bytes
/// five times (session id, refresh token, token ids; issue #39). Each byte is handed out once
/// and zeroed in the block as it is. Herald never forks, so no child process can repeat a block.
public enum SecureRandom {
    /// Requests up to this size come from the block; larger ones go to OpenSSL directly.
    static let pooledRequestLimit = 256
    static let blockSize = 4_096

    private struct Block {
        var bytes = [UInt8](repeating: 0, count: SecureRandom.blockSize)
        /// Bytes before this offset were handed out (and zeroed).
        var next = SecureRandom.blockSize
    }

    private static let block = Mutex(Block())

    /// `count` random bytes. Traps if the CSPRNG fails: continuing would hand out guessable
    /// tokens and keys, which is worse than stopping.
    public static func bytes(count: Int) -> [UInt8] {
        precondition(count >= 0, "negative random byte count")
        if count == 0 { return [] }
        guard count <= pooledRequestLimit else { return drawn(count: count) }
        return block.withLock { block in
            if blockSize - block.next < count {
                block.bytes.withUnsafeMutableBufferPointer { fill($0) }
                block.next = 0
            }
            let start = block.next
            block.next += count
            let taken = Array(block.bytes[start..<block.next])
            for index in start..<block.next { block.bytes[index] = 0 }
            return taken
        }
    }

    /// `count` bytes straight from OpenSSL.
    private static func drawn(count: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            fill(buffer)
            initialized = count
        }
    }

    /// Fills `buffer` from OpenSSL's DRBG.
    private static func fill(_ buffer: UnsafeMutableBufferPointer<UInt8>) {
        var offset = 0
        while offset < buffer.count {
            // RAND_bytes takes an Int32 length; chunk so any Int count works.
            let chunk = min(buffer.count - offset, Int(Int32.max))
            guard RAND_bytes(buffer.baseAddress! + offset, Int32(chunk)) == 1 else {
                fatalError("OpenSSL CSPRNG failure (RAND_bytes)")
            }
            offset += chunk
        }
    }

    /// A base64url token of `byteCount` random bytes (32 bytes = 256 bits by default).
    public static func token(byteCount: Int = 32) -> String {
        Base64URL.encode(bytes(count: byteCount))
    }
}
