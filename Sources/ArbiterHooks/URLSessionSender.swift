import ArbiterIO
import Dispatch
import Foundation
import FoundationNetworking

/// `https://` through the toolchain's URLSession (libcurl and OpenSSL at run time).
/// Its `timeoutInterval` is an idle timeout, which a receiver sending a byte a second
/// outlives, so the task is cancelled at a total deadline of our own. Redirects are not
/// followed, and the task is cancelled once the status is known: a body is never read.
public final class URLSessionSender: NSObject, HookSender, URLSessionDataDelegate, @unchecked Sendable {
    private let waiting = Locked<[Int: @Sendable (HookOutcome) -> Void]>([:])
    private let delegateQueue = OperationQueue()
    private lazy var session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpShouldSetCookies = false
        configuration.urlCache = nil
        return URLSession(configuration: configuration, delegate: self, delegateQueue: delegateQueue)
    }()
    /// Guards the lazy `session`'s first use.
    private let sessionLock = Locked(OwnerState())

    public override init() {
        delegateQueue.maxConcurrentOperationCount = 1
        super.init()
    }

    public func send(_ request: HookRequest, timeoutMs: Int64, done: @escaping @Sendable (HookOutcome) -> Void) {
        let text = "https://\(request.url.authority)\(request.url.target)"
        guard let url = URL(string: text) else { return done(.failed("not a URL URLSession takes")) }
        var r = URLRequest(url: url)
        r.httpMethod = "POST"
        r.httpBody = Data(request.body)
        r.timeoutInterval = Double(timeoutMs) / 1000
        r.setValue("application/json", forHTTPHeaderField: "Content-Type")
        r.setValue("arbiter", forHTTPHeaderField: "User-Agent")
        for (name, value) in request.headers { r.setValue(value, forHTTPHeaderField: name) }
        let task = sessionLock.withLock { _ in session.dataTask(with: r) }
        let id = task.taskIdentifier
        waiting.withLock { $0[id] = done }
        // Not on `DispatchQueue.global()`, which blocked threads elsewhere can hold up for seconds.
        HookWorkers.timers.asyncAfter(deadline: .now() + .milliseconds(Int(timeoutMs))) { [weak self, weak task] in
            guard let self, self.finish(id, .failed("timed out (total deadline)")) else { return }
            task?.cancel()
        }
        task.resume()
    }

    /// Reports once per task; false when it was reported already.
    @discardableResult
    private func finish(_ id: Int, _ outcome: HookOutcome) -> Bool {
        guard let done = waiting.withLock({ $0.removeValue(forKey: id) }) else { return false }
        done(outcome)
        return true
    }

    public func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        let code = (response as? HTTPURLResponse)?.statusCode ?? 0
        finish(dataTask.taskIdentifier, code > 0 ? .status(code) : .failed("not an HTTP answer"))
        completionHandler(.cancel)
    }

    public func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse, newRequest request: URLRequest,
        completionHandler: @escaping (URLRequest?) -> Void
    ) {
        // Not followed: the redirect's status is the answer (3xx is rejected, not retried).
        finish(task.taskIdentifier, .status(response.statusCode))
        completionHandler(nil)
    }

    public func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        finish(task.taskIdentifier, .failed(error.map { "\($0.localizedDescription)" } ?? "no answer"))
    }
}
