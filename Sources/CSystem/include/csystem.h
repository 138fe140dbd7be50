#ifndef CSYSTEM_H
#define CSYSTEM_H

#include <stdint.h>

// Thin wrappers for the Linux calls Swift's Glibc module does not export (they sit
// behind _GNU_SOURCE or in headers it does not include). epoll_event is packed on
// x86_64, so events cross the boundary as two plain arrays instead.

int cs_epoll_create(void);
/// A non-blocking eventfd (EFD_NONBLOCK | EFD_CLOEXEC), for waking a thread blocked in
/// epoll_wait. Returns the fd or -errno.
int cs_eventfd(void);
/// Returns 0 or errno.
int cs_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data);
/// Waits up to timeout_ms (0: poll). Returns the count, or -errno.
int cs_epoll_wait(int epfd, uint32_t *events, uint64_t *data, int max, int timeout_ms);
/// accept4 with SOCK_NONBLOCK | SOCK_CLOEXEC. Returns the fd or -errno.
int cs_accept(int listener, char *peer, int peer_len);
/// Asks the kernel to stamp what arrives on a socket with its receive time
/// (SO_TIMESTAMPNS, CLOCK_REALTIME). Returns 0 or errno.
int cs_enable_rx_timestamps(int fd);
/// recvmsg(2) without blocking into buf, with the kernel's receive stamp of the data
/// read (of the last segment, when a read takes several) in *stamp_ns (nanoseconds on
/// CLOCK_REALTIME; 0 when none came). Returns the bytes read, 0 at the end, or -errno.
long cs_recv_stamped(int fd, void *buf, long len, int64_t *stamp_ns);
/// 4 when host is an IPv4 literal (dotted quad), 6 when an IPv6 literal (no brackets),
/// 0 otherwise. Shared by the server's --host and the generator's --host and --redis.
int cs_ip_literal_version(const char *host);

/// The machine's interface addresses (IPv4 and IPv6, numeric, without zone), each
/// followed by a newline, into buf. Returns the bytes written, or -errno.
int cs_interface_addresses(char *buf, int len);

extern const int cs_EPOLL_CTL_ADD;
extern const int cs_EPOLL_CTL_MOD;
extern const int cs_EPOLL_CTL_DEL;
extern const uint32_t cs_EPOLLIN;
extern const uint32_t cs_EPOLLOUT;
extern const uint32_t cs_EPOLLERR;
extern const uint32_t cs_EPOLLHUP;
extern const uint32_t cs_EPOLLRDHUP;

#endif
