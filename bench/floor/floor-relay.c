// The relay floor: the least work any relaying node can do, to price "one extra loopback
// round trip" on this machine at the moment the cluster bench measures the real relay.
//
// Not part of the product. Each client connection gets its own upstream connection to
// TARGET_PORT (a floor-server), and bytes are copied both ways as they come: one epoll
// thread, level-triggered, one read and one write per readable socket, no parsing, no
// framing, no locks, no hand-off between threads. A client talking to floor-server through
// it pays the extra hop and nothing else; bench/cluster.py runs it beside the arbiter's
// relaying node (PARTS=latency) so both are measured on the same machine, the same minute.
//
//   cc -O2 -o floor-relay floor-relay.c && ./floor-relay PORT TARGET_PORT
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "floor-listen.h"

enum { MAX_FD = 65536, BUF = 65536 };

static int peer[MAX_FD];  // fd + 1 of the other end, 0 when not open

static void close_pair(int ep, int fd) {
    int other = peer[fd] - 1;
    epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
    close(fd);
    peer[fd] = 0;
    if (other >= 0 && peer[other]) {
        epoll_ctl(ep, EPOLL_CTL_DEL, other, NULL);
        close(other);
        peer[other] = 0;
    }
}

// Writes all of it; a full socket (never in a closed loop of one request) waits in poll.
static int write_all(int fd, const char *p, ssize_t n) {
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w > 0) { p += w; n -= w; continue; }
        if (w < 0 && errno == EAGAIN) {
            struct pollfd pf = { .fd = fd, .events = POLLOUT };
            poll(&pf, 1, 1000);
            continue;
        }
        return -1;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: floor-relay PORT TARGET_PORT\n"); return 64; }
    signal(SIGPIPE, SIG_IGN);
    int ls, one = 1;
    int ep = floor_listen(atoi(argv[1]), "floor-relay", &ls);
    struct sockaddr_in t = { .sin_family = AF_INET, .sin_port = htons(atoi(argv[2])), .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    struct epoll_event ready[512];
    static char buf[BUF];
    for (;;) {
        int n = epoll_wait(ep, ready, 512, -1);
        for (int i = 0; i < n; i++) {
            int fd = ready[i].data.fd;
            if (fd == ls) {
                int cfd;
                while ((cfd = accept4(ls, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
                    int up = socket(AF_INET, SOCK_STREAM, 0);
                    if (up < 0 || cfd >= MAX_FD || up >= MAX_FD || connect(up, (struct sockaddr *)&t, sizeof t)) {
                        perror("floor-relay: upstream");
                        close(cfd);
                        if (up >= 0) close(up);
                        continue;
                    }
                    if (fcntl(up, F_SETFL, O_NONBLOCK)) { close(cfd); close(up); continue; }
                    setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    setsockopt(up, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    peer[cfd] = up + 1;
                    peer[up] = cfd + 1;
                    struct epoll_event ce = { .events = EPOLLIN, .data.fd = cfd };
                    struct epoll_event ue = { .events = EPOLLIN, .data.fd = up };
                    epoll_ctl(ep, EPOLL_CTL_ADD, cfd, &ce);
                    epoll_ctl(ep, EPOLL_CTL_ADD, up, &ue);
                }
                continue;
            }
            if (!peer[fd]) continue;
            ssize_t r = read(fd, buf, sizeof buf);
            if (r < 0 && errno == EAGAIN) continue;
            if (r <= 0 || write_all(peer[fd] - 1, buf, r)) close_pair(ep, fd);
        }
    }
}
