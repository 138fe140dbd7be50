/// `Locked`, the package's one lock, for every module built on ArbiterIO (as swift-nio
/// re-exports NIOCore): they take it from here rather than each naming ArbiterLock.
@_exported import ArbiterLock
