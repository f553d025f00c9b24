#ifndef COEXIST_CSYSTEMD_SHIM_H
#define COEXIST_CSYSTEMD_SHIM_H

// libsystemd (notify, socket activation, journal) and the Linux interfaces a service uses beside it
// that Glibc's module does not export: signalfd, inotify, eventfd, accept4, SO_PEERCRED, prctl.
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>
#include <sys/signalfd.h>
#include <sys/inotify.h>
#include <sys/eventfd.h>
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

#endif
