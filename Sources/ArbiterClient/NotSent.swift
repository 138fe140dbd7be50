/// A command queued on a link that ended before writing it: it waits for the next link.
struct NotSent: Error {}
