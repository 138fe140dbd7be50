#ifndef CSYSTEM_CLIENT_H
#define CSYSTEM_CLIENT_H

#include <stdint.h>

// Client-side calls (ArbiterIO's Sys.connect and Sys.raiseFileLimit, arbiter-load's
// atomics), kept apart from the server's csystem.h so the two never step on each
// other. Same conventions: failures come back as -errno.

/// A non-blocking, close-on-exec TCP socket with TCP_NODELAY, connecting to host:port,
/// where host is an IPv4 or IPv6 literal (no brackets). Returns the fd once the connect
/// is done or in progress, -EINVAL for anything else, or -errno.
int cs_connect(const char *host, uint16_t port);
/// The pending error of a socket (SO_ERROR) after a non-blocking connect: 0 when connected.
int cs_socket_error(int fd);
/// Raises the soft RLIMIT_NOFILE towards `want` (capped by the hard limit). Returns the
/// soft limit now in force.
uint64_t cs_raise_nofile(uint64_t want);
/// Atomic access to plain words shared between generator threads (Swift's Atomic
/// cannot live in a plain buffer): a release store and an acquire load, so a word
/// written before a release store is seen by whoever acquires the stored value.
void cs_atomic_store_u64(uint64_t *p, uint64_t v);
uint64_t cs_atomic_load_u64(const uint64_t *p);
/// Whether fd is a terminal.
int cs_isatty(int fd);

#endif
