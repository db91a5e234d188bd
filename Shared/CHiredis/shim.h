#ifndef TOLLGATE_CHIREDIS_SHIM_H
#define TOLLGATE_CHIREDIS_SHIM_H
#include <hiredis/hiredis.h>

#ifdef __linux__
#include <errno.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

/* epoll_event is packed on x86_64; these wrappers keep its layout out of Swift. */

/* Sets (EPOLL_CTL_ADD or EPOLL_CTL_MOD) or removes (events == 0: EPOLL_CTL_DEL) the interest in `fd`. */
static inline int tg_epoll_set(int epfd, int op, int fd, uint32_t events, uint64_t token) {
    struct epoll_event event;
    event.events = events;
    event.data.u64 = token;
    return epoll_ctl(epfd, op, fd, &event);
}

/* Waits like epoll_wait, copying each ready token and its events into two plain arrays. */
static inline int tg_epoll_wait(int epfd, uint64_t *tokens, uint32_t *events, int capacity, int timeout_ms) {
    struct epoll_event ready[256];
    if (capacity > 256) capacity = 256;
    int count = epoll_wait(epfd, ready, capacity, timeout_ms);
    for (int index = 0; index < count; index++) {
        tokens[index] = ready[index].data.u64;
        events[index] = ready[index].events;
    }
    return count;
}

static inline int tg_eventfd(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }
static inline int tg_errno(void) { return errno; }
#endif

#endif
