#ifndef COEXIST_CSYSTEMD_SHIM_H
#define COEXIST_CSYSTEMD_SHIM_H

// libsystemd (notify, socket activation, journal) and the Linux interfaces a service uses beside it
// that Glibc's module does not export: signalfd, inotify, eventfd, epoll, accept4, SO_PEERCRED, prctl.
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>
#include <sys/signalfd.h>
#include <sys/inotify.h>
#include <sys/eventfd.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/prctl.h>

// accept4 and struct ucred are declared only under _GNU_SOURCE; glibc always provides them.
extern int accept4(int fd, struct sockaddr *address, socklen_t *length, int flags);

struct coexist_peer_credentials {
    int pid;
    unsigned int uid;
    unsigned int gid;
};

/// A non-blocking, close-on-exec accept.
static inline int coexist_accept(int fd) {
    return accept4(fd, (struct sockaddr *)0, (socklen_t *)0, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

/// SO_PEERCRED of a connected Unix socket; 0 on success, -1 with errno set.
static inline int coexist_peer_credentials(int fd, struct coexist_peer_credentials *credentials) {
    socklen_t length = sizeof(*credentials);
    return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, credentials, &length);
}

/// Names the calling thread (at most 15 bytes are kept), for `top -H` and `/proc/PID/task/*/comm`.
static inline int coexist_name_thread(const char *name) {
    return prctl(PR_SET_NAME, name, 0, 0, 0);
}

/// Sets the calling thread's timer slack (threads it starts inherit it): how late the kernel may fire its
/// sleeps and poll timeouts to batch wake-ups (default 50 µs).
static inline int coexist_set_timer_slack(unsigned long nanoseconds) {
    return prctl(PR_SET_TIMERSLACK, nanoseconds, 0, 0, 0);
}

/// Registers `fd` in the epoll set `set` (EPOLL_CTL_ADD or EPOLL_CTL_MOD) for `events`, level-triggered,
/// with `key` as what readiness reports; or removes it (EPOLL_CTL_DEL). 0 on success, -1 with errno set.
/// (`struct epoll_event` is packed on x86-64: Swift never sees it.)
static inline int coexist_epoll_control(int set, int operation, int fd, unsigned int events, unsigned long long key) {
    struct epoll_event event;
    event.events = events;
    event.data.u64 = key;
    return epoll_ctl(set, operation, fd, &event);
}

/// Takes at most `capacity` (at most 64) ready registrations of `set` without waiting: their keys and
/// events. The count, or -1 with errno set.
static inline int coexist_epoll_ready(int set, unsigned long long *keys, unsigned int *events, int capacity) {
    struct epoll_event ready[64];
    int count = epoll_wait(set, ready, capacity < 64 ? capacity : 64, 0);
    for (int index = 0; index < count; index++) {
        keys[index] = ready[index].data.u64;
        events[index] = ready[index].events;
    }
    return count;
}

#endif
