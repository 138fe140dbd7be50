#define _GNU_SOURCE
#include "csystem.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

const int cs_EPOLL_CTL_ADD = EPOLL_CTL_ADD;
const int cs_EPOLL_CTL_MOD = EPOLL_CTL_MOD;
const int cs_EPOLL_CTL_DEL = EPOLL_CTL_DEL;
const uint32_t cs_EPOLLIN = EPOLLIN;
const uint32_t cs_EPOLLOUT = EPOLLOUT;
const uint32_t cs_EPOLLERR = EPOLLERR;
const uint32_t cs_EPOLLHUP = EPOLLHUP;
const uint32_t cs_EPOLLRDHUP = EPOLLRDHUP;

int cs_epoll_create(void) {
    int fd = epoll_create1(EPOLL_CLOEXEC);
    return fd >= 0 ? fd : -errno;
}

int cs_eventfd(void) {
    int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    return fd >= 0 ? fd : -errno;
}

int cs_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data) {
    struct epoll_event ev;
    ev.events = events;
    ev.data.u64 = data;
    return epoll_ctl(epfd, op, fd, &ev) == 0 ? 0 : errno;
}

int cs_epoll_wait(int epfd, uint32_t *events, uint64_t *data, int max, int timeout_ms) {
    struct epoll_event evs[256];
    if (max > 256) max = 256;
    int n;
    do {
        n = epoll_wait(epfd, evs, max, timeout_ms);
    } while (n < 0 && errno == EINTR);
    if (n < 0) return -errno;
    for (int i = 0; i < n; i++) {
        events[i] = evs[i].events;
        data[i] = evs[i].data.u64;
    }
    return n;
}

int cs_enable_rx_timestamps(int fd) {
    int on = 1;
    return setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof(on)) == 0 ? 0 : errno;
}

long cs_recv_stamped(int fd, void *buf, long len, int64_t *stamp_ns) {
    // Room for one timespec message; anything else the kernel adds is cut (MSG_CTRUNC).
    union {
        char bytes[CMSG_SPACE(sizeof(struct timespec))];
        struct cmsghdr align;
    } control;
    struct iovec iov = {.iov_base = buf, .iov_len = (size_t)len};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.bytes, .msg_controllen = sizeof(control.bytes)};
    ssize_t n;
    do {
        n = recvmsg(fd, &msg, MSG_DONTWAIT);
    } while (n < 0 && errno == EINTR);
    if (n < 0) return -errno;
    *stamp_ns = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
            struct timespec ts;
            memcpy(&ts, CMSG_DATA(c), sizeof(ts));
            *stamp_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
        }
    }
    return (long)n;
}

int cs_accept(int listener, char *peer, int peer_len) {
    struct sockaddr_storage addr;
    socklen_t len = sizeof(addr);
    int fd;
    do {
        fd = accept4(listener, (struct sockaddr *)&addr, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    } while (fd < 0 && (errno == EINTR || errno == ECONNABORTED));
    if (fd < 0) return -errno;
    if (peer && peer_len > 0) {
        char host[INET6_ADDRSTRLEN] = "?";
        if (addr.ss_family == AF_INET6) {
            struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&addr;
            // An IPv4 peer of a dual-stack (::) listener reads as its IPv4 address.
            if (IN6_IS_ADDR_V4MAPPED(&a6->sin6_addr)) {
                inet_ntop(AF_INET, &a6->sin6_addr.s6_addr[12], host, sizeof(host));
                snprintf(peer, (size_t)peer_len, "%s:%u", host, (unsigned)ntohs(a6->sin6_port));
            } else {
                inet_ntop(AF_INET6, &a6->sin6_addr, host, sizeof(host));
                snprintf(peer, (size_t)peer_len, "[%s]:%u", host, (unsigned)ntohs(a6->sin6_port));
            }
        } else {
            struct sockaddr_in *a4 = (struct sockaddr_in *)&addr;
            inet_ntop(AF_INET, &a4->sin_addr, host, sizeof(host));
            snprintf(peer, (size_t)peer_len, "%s:%u", host, (unsigned)ntohs(a4->sin_port));
        }
    }
    return fd;
}

int cs_ip_literal_version(const char *host) {
    struct in6_addr a6;
    struct in_addr a4;
    if (inet_pton(AF_INET, host, &a4) == 1) return 4;
    if (inet_pton(AF_INET6, host, &a6) == 1) return 6;
    return 0;
}

int cs_interface_addresses(char *buf, int len) {
    struct ifaddrs *list;
    if (getifaddrs(&list) != 0) return -errno;
    int used = 0;
    for (struct ifaddrs *a = list; a; a = a->ifa_next) {
        if (!a->ifa_addr) continue;
        char text[INET6_ADDRSTRLEN];
        const void *src;
        int family = a->ifa_addr->sa_family;
        if (family == AF_INET) src = &((struct sockaddr_in *)a->ifa_addr)->sin_addr;
        else if (family == AF_INET6) src = &((struct sockaddr_in6 *)a->ifa_addr)->sin6_addr;
        else continue;
        if (!inet_ntop(family, src, text, sizeof text)) continue;
        int n = (int)strlen(text);
        if (used + n + 1 > len) break;
        memcpy(buf + used, text, n);
        buf[used + n] = '\n';
        used += n + 1;
    }
    freeifaddrs(list);
    return used;
}
