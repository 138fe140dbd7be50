// Shared by floor-server.c and floor-relay.c: a non-blocking listener on 127.0.0.1:port,
// already watched by a new epoll set. Returns the epoll descriptor and sets *listener;
// exits 1, naming `who`, when the port cannot be had.
#ifndef FLOOR_LISTEN_H
#define FLOOR_LISTEN_H
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>

static int floor_listen(int port, const char *who, int *listener) {
    int one = 1, ls = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    if (bind(ls, (struct sockaddr *)&a, sizeof a) || listen(ls, 4096)) { perror(who); exit(1); }
    int ep = epoll_create1(0);
    struct epoll_event ev = { .events = EPOLLIN, .data.fd = ls };
    epoll_ctl(ep, EPOLL_CTL_ADD, ls, &ev);
    *listener = ls;
    return ep;
}
#endif
