/// A watch the caller pulls from. A pull keeps the pure side free of threads and callbacks:
/// the in-memory etcd hands over what happened since the last pull, the HTTP client
/// waits for the next streamed message up to the timeout.
public protocol EtcdWatchStream: AnyObject {
    /// The events that arrived, possibly none when the timeout passed first. Throws
    /// `unavailable` when the stream broke: the caller watches again from the revision
    /// after the last event it saw.
    func next(timeoutMilliseconds: Int) throws(EtcdError) -> [EtcdWatchEvent]
    func cancel()
}
