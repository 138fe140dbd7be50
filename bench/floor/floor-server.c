// The floor: the least work any server can do for arbiter-load's contend workload.
//
// Not part of the product. It answers just enough of the line protocol for `contend`
// (HELLO, JOIN with a snapshot of tap buttons b1..bN, DOWN, UP) with a real lock table,
// so the generator's safety checks still hold, and nothing else: one epoll thread,
// level-triggered, one read per readable socket and one write per socket per round —
// the same system calls the arbiter and Redis make, with next to no user-space work.
// bench/floor.sh runs it beside the arbiter and Redis: its lock cycles/s are the most
// this generator and this machine can show for any server.
//
//   cc -O2 -o floor-server floor-server.c && ./floor-server PORT [BUTTONS]
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "floor-listen.h"

enum { MAX_FD = 65536, IN_CAP = 4096, OUT_CAP = 65536, MAX_BUTTONS = 1000 };

struct conn {
    int open;
    int session;
    char name[64];
    char in[IN_CAP];
    int inLen;
    char *out;
    int outLen;
};

static struct conn conns[MAX_FD];
static int owner[MAX_BUTTONS + 1];     // fd + 1 of the holder, 0 when free
static long fenceOf[MAX_BUTTONS + 1];
static long lastFence;
static int buttons = 100;
static int sessions;
static int dirty[MAX_FD], dirtyCount;

static void out(struct conn *c, const char *s, int n) {
    if (c->outLen + n > OUT_CAP) return; // never here in contend: one request in flight
    memcpy(c->out + c->outLen, s, n);
    c->outLen += n;
}

static int button(const char *s, const char *end) {
    if (end - s < 2 || s[0] != 'b') return -1;
    int v = 0;
    for (const char *p = s + 1; p < end; p++) {
        if (*p < '0' || *p > '9') return -1;
        v = v * 10 + (*p - '0');
    }
    return v >= 1 && v <= buttons ? v : -1;
}

// One command line, without its newline.
static void command(int fd, struct conn *c, char *line, int n) {
    char buf[256];
    int k;
    line[n] = 0;
    if (strncmp(line, "HELLO ", 6) == 0) {
        int len = n - 6 < (int)sizeof c->name - 1 ? n - 6 : (int)sizeof c->name - 1;
        memmove(c->name, line + 6, len);
        c->name[len] = 0;
        k = snprintf(buf, sizeof buf, "WELCOME session=s%d name=guest-%d proto=1\nOK HELLO name=%s session=s%d role=admin\n",
                     c->session, c->session, c->name, c->session);
        out(c, buf, k);
    } else if (strncmp(line, "JOIN ", 5) == 0) {
        for (int b = 1; b <= buttons; b++) {
            k = snprintf(buf, sizeof buf, "BUTTON %s b%d kind=tap group=g%d state=idle owner=- progress=0.000\n", line + 5, b, b);
            out(c, buf, k);
        }
        k = snprintf(buf, sizeof buf, "OK JOIN %s members=1 fence=%ld seq=0\n", line + 5, lastFence);
        out(c, buf, k);
    } else if (strncmp(line, "DOWN ", 5) == 0) {
        char *panel = line + 5, *sp = strchr(panel, ' ');
        int b = sp ? button(sp + 1, line + n) : -1;
        if (b < 0) { out(c, "ERROR unknown-button\n", 21); return; }
        *sp = 0;
        if (owner[b] == 0) {
            owner[b] = fd + 1;
            fenceOf[b] = ++lastFence;
            k = snprintf(buf, sizeof buf, "GRANTED %s b%d fence=%ld\n", panel, b, lastFence);
        } else {
            k = snprintf(buf, sizeof buf, "DENIED %s b%d reason=busy owner=%s active=b%d\n", panel, b, conns[owner[b] - 1].name, b);
        }
        out(c, buf, k);
    } else if (strncmp(line, "UP ", 3) == 0) {
        char *panel = line + 3, *sp = strchr(panel, ' ');
        char *sp2 = sp ? strchr(sp + 1, ' ') : NULL;
        int b = sp ? button(sp + 1, sp2 ? sp2 : line + n) : -1;
        if (b < 0 || owner[b] != fd + 1) { out(c, "ERROR not-owner\n", 16); return; }
        owner[b] = 0;
        *sp = 0;
        k = snprintf(buf, sizeof buf, "OK UP %s b%d\n", panel, b);
        out(c, buf, k);
    } else {
        out(c, "ERROR unknown-command\n", 22);
    }
}

static void drop(int ep, int fd) {
    epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
    close(fd);
    for (int b = 1; b <= buttons; b++) if (owner[b] == fd + 1) owner[b] = 0;
    free(conns[fd].out);
    memset(&conns[fd], 0, sizeof conns[fd]);
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: floor-server PORT [BUTTONS]\n"); return 64; }
    if (argc > 2) buttons = atoi(argv[2]);
    if (buttons < 1 || buttons > MAX_BUTTONS) return 64;
    signal(SIGPIPE, SIG_IGN);
    int ls, one = 1;
    int ep = floor_listen(atoi(argv[1]), "floor-server", &ls);
    struct epoll_event ready[512];
    for (;;) {
        int n = epoll_wait(ep, ready, 512, -1);
        for (int i = 0; i < n; i++) {
            int fd = ready[i].data.fd;
            if (fd == ls) {
                int cfd;
                while ((cfd = accept4(ls, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
                    if (cfd >= MAX_FD) { close(cfd); continue; }
                    setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    conns[cfd] = (struct conn){ .open = 1, .session = ++sessions, .out = malloc(OUT_CAP) };
                    struct epoll_event ce = { .events = EPOLLIN, .data.fd = cfd };
                    epoll_ctl(ep, EPOLL_CTL_ADD, cfd, &ce);
                }
                continue;
            }
            struct conn *c = &conns[fd];
            if (!c->open) continue;
            ssize_t r = read(fd, c->in + c->inLen, IN_CAP - 1 - c->inLen);
            if (r <= 0) {
                if (r < 0 && errno == EAGAIN) continue;
                drop(ep, fd);
                continue;
            }
            c->inLen += r;
            int start = 0;
            for (int j = 0; j < c->inLen; j++) {
                if (c->in[j] != '\n') continue;
                command(fd, c, c->in + start, j - start);
                start = j + 1;
            }
            memmove(c->in, c->in + start, c->inLen - start);
            c->inLen -= start;
            if (c->inLen >= IN_CAP - 1) { drop(ep, fd); continue; }
            if (c->outLen > 0) dirty[dirtyCount++] = fd;
        }
        // Replies of the round, one write per socket (as both real servers do).
        for (int i = 0; i < dirtyCount; i++) {
            struct conn *c = &conns[dirty[i]];
            if (!c->open || c->outLen == 0) continue;
            ssize_t w = write(dirty[i], c->out, c->outLen);
            if (w > 0 && w < c->outLen) memmove(c->out, c->out + w, c->outLen - w);
            c->outLen = w > 0 ? c->outLen - (int)w : c->outLen;
        }
        dirtyCount = 0;
    }
}
