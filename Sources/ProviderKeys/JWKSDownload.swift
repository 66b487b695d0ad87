import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// One capped, timed download from a provider: the `URLSession` delegate of a single JWKS fetch
/// or an Apple token/revoke call (`AppleAPIClient`, hence `package`).
///
/// Finishes exactly once, whichever comes first: completion, a non-2xx status, the cap, the
/// connect timer (no response headers yet) or the total timer.
package final class JWKSDownload: NSObject, URLSessionDataDelegate, Sendable {
    package enum Result: Sendable {
        case body([UInt8], cacheControl: String?)
        /// A 4xx whose body was read (only with `readsRefusals`): the server refused the request
        /// itself, which is not an outage.
        case refused(status: Int, body: [UInt8])
        case failure(JWKSFetchOutcome)
    }

    private struct State {
        var body: [UInt8] = []
        var cacheControl: String?
        var receivedResponse = false
        /// The 4xx status whose body is being read, when `readsRefusals`.
        var refusalStatus: Int?
        var finished = false
        var continuation: CheckedContinuation<Result, Never>?
        var task: URLSessionDataTask?
    }

    private let maximumBytes: Int
    /// Whether a 4xx body is read and handed back (`refused`): Apple's token endpoint says why
    /// it refused in it (`invalid_client`, `invalid_grant`). A key set has nothing to say.
    private let readsRefusals: Bool
    private let state = Mutex(State())

    package init(maximumBytes: Int, readsRefusals: Bool = false) {
        self.maximumBytes = maximumBytes
        self.readsRefusals = readsRefusals
    }

    /// Starts `task` and suspends until the download finishes one way or another. Cancelling the
    /// caller ends it as a network error, so shutting down never waits out a slow upstream.
    package func run(task: URLSessionDataTask, connectTimeout: TimeInterval, totalTimeout: TimeInterval) async -> Result {
        await withTaskCancellationHandler {
            await download(task: task, connectTimeout: connectTimeout, totalTimeout: totalTimeout)
        } onCancel: {
            finish(.failure(.networkError))
        }
    }

    private func download(task: URLSessionDataTask, connectTimeout: TimeInterval, totalTimeout: TimeInterval) async -> Result {
        await withCheckedContinuation { (continuation: CheckedContinuation<Result, Never>) in
            // Cancelled before it began: `finish` already ran, with no one to resume.
            let cancelled = state.withLock { state in
                state.continuation = continuation
                state.task = task
                return state.finished
            }
            if cancelled {
                continuation.resume(returning: .failure(.networkError))
                return
            }
            task.resume()
            DispatchQueue.global().asyncAfter(deadline: .now() + connectTimeout) { [self] in
                let waiting = state.withLock { !$0.receivedResponse }
                if waiting { finish(.failure(.timeout)) }
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + totalTimeout) { [self] in
                finish(.failure(.timeout))
            }
        }
    }

    /// Resumes the caller once and cancels the transfer; later calls do nothing.
    private func finish(_ result: Result) {
        let (continuation, task) = state.withLock { state -> (CheckedContinuation<Result, Never>?, URLSessionDataTask?) in
            guard !state.finished else { return (nil, nil) }
            state.finished = true
            defer { state.continuation = nil; state.task = nil }
            return (state.continuation, state.task)
        }
        guard let continuation else { return }
        if case .failure = result { task?.cancel() }
        continuation.resume(returning: result)
    }

    package func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        state.withLock { $0.receivedResponse = true }
        guard let http = response as? HTTPURLResponse, (200..<300).contains(http.statusCode) else {
            if readsRefusals, let http = response as? HTTPURLResponse, (400..<500).contains(http.statusCode),
               response.expectedContentLength <= Int64(maximumBytes) {
                state.withLock { $0.refusalStatus = http.statusCode }
                completionHandler(.allow)
                return
            }
            finish(.failure(.httpError))
            completionHandler(.cancel)
            return
        }
        if response.expectedContentLength > Int64(maximumBytes) {
            finish(.failure(.tooLarge))
            completionHandler(.cancel)
            return
        }
        let cacheControl = http.allHeaderFields.first { key, _ in
            (key as? String)?.caseInsensitiveCompare("Cache-Control") == .orderedSame
        }?.value as? String
        state.withLock { $0.cacheControl = cacheControl }
        completionHandler(.allow)
    }

    /// Redirects are refused: a provider's key set lives at one URL, and following a `Location`
    /// would let whoever answers there point Herald at any origin (an internal address, or keys
    /// of their own over plain http). The 3xx itself then arrives as a non-2xx `httpError`.
    package func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
        completionHandler(nil)
    }

    package func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let overflow = state.withLock { state -> Bool in
            guard !state.finished else { return false }
            if state.body.count + data.count > maximumBytes { return true }
            state.body.append(contentsOf: data)
            return false
        }
        if overflow { finish(.failure(.tooLarge)) }
    }

    package func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let error else {
            let (body, cacheControl, refusal) = state.withLock { ($0.body, $0.cacheControl, $0.refusalStatus) }
            finish(refusal.map { .refused(status: $0, body: body) } ?? .body(body, cacheControl: cacheControl))
            return
        }
        let code = (error as? URLError)?.code
        finish(.failure(code == .timedOut ? .timeout : .networkError))
    }
}
