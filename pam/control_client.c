#include "control_client.h"

#include <errno.h>
#include <poll.h>
#include <sodium.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "reply_json.h"
#include "socket_place.h"

#define MAXIMUM_SECRET_LENGTH 4096
#define MAXIMUM_HEADER_LENGTH 65536
#define MAXIMUM_REPLY_LENGTH 65536

enum phase { CONNECTING, SENDING, READING_LENGTH, READING_REPLY, FINISHED };

static void put_be32(unsigned char *out, uint32_t value)
{
    out[0] = (unsigned char)(value >> 24);
    out[1] = (unsigned char)(value >> 16);
    out[2] = (unsigned char)(value >> 8);
    out[3] = (unsigned char)value;
}

static void finish(struct pp_call *call, enum pp_outcome outcome)
{
    call->outcome = outcome;
    call->phase = FINISHED;
    if (call->fd >= 0)
        close(call->fd);
    call->fd = -1;
    if (call->socket_fd >= 0)
        close(call->socket_fd);
    call->socket_fd = -1;
    free(call->json);
    call->json = NULL;
}

/* <first 8 bytes of SHA-256 of the mount point, in hex>.sock */
static void socket_name(const char *mountpoint, char out[22])
{
    unsigned char digest[crypto_hash_sha256_BYTES];
    crypto_hash_sha256(digest, (const unsigned char *)mountpoint, strlen(mountpoint));
    for (int i = 0; i < 8; i++)
        snprintf(out + 2 * i, 3, "%02x", digest[i]);
    memcpy(out + 16, ".sock", 6);
}

/* The socket of a daemon this user may trust with the password: a socket owned by root in
 * the system directory, or by the user or root in the user's runtime directory, each reached
 * without crossing a mount (socket_place.h). */
static bool find_daemon(struct pp_call *call, const char *mountpoint, uid_t user)
{
    char name[22], user_base[32], relative[32];
    socket_name(mountpoint, name);
    snprintf(user_base, sizeof user_base, "/run/user/%u", (unsigned)user);
    const char *bases[2] = {PP_SYSTEM_SOCKET_DIRECTORY, user_base};
    bool blocked = false;
    for (int i = 0; i < 2; i++) {
        snprintf(relative, sizeof relative, "%s%s", i == 0 ? "" : "protfs/", name);
        snprintf(call->socket_path, sizeof call->socket_path, "%s/%s", bases[i], relative);
        int fd = pp_socket_place_open(bases[i], relative);
        blocked |= fd < 0 && errno == EXDEV;
        struct stat st;
        if (fd < 0 || fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode) || (st.st_uid != 0 && (i == 0 || st.st_uid != user))) {
            if (fd >= 0)
                close(fd);
            continue;
        }
        call->socket_fd = fd;
        call->in_system_directory = i == 0;
        call->allowed[0] = 0;
        call->allowed[1] = i == 0 ? 0 : user;
        return true;
    }
    snprintf(call->why, sizeof call->why, "no protfs daemon serves it (no control socket in %s or %s/protfs%s)",
             PP_SYSTEM_SOCKET_DIRECTORY, user_base, blocked ? ", which a mount covers: it is not looked into" : "");
    return false;
}

void pp_call_prepare(struct pp_call *call, const char *mountpoint, uid_t user, const char *header,
                     const struct pp_secret *secrets, size_t secret_count)
{
    memset(call, 0, sizeof *call);
    call->fd = -1;
    call->socket_fd = -1;
    call->phase = CONNECTING;
    size_t header_length = strlen(header);
    if (secret_count > PP_MAXIMUM_SECRETS || header_length == 0 || header_length > MAXIMUM_HEADER_LENGTH) {
        snprintf(call->why, sizeof call->why, "the module built a bad request");
        finish(call, PP_BROKEN);
        return;
    }
    if (sodium_init() < 0) {
        snprintf(call->why, sizeof call->why, "libsodium cannot start");
        finish(call, PP_BROKEN);
        return;
    }
    if (!find_daemon(call, mountpoint, user)) {
        finish(call, PP_NO_DAEMON);
        return;
    }
    memcpy(call->prefix, "PFC\x01", 4);
    put_be32(call->prefix + 4, (uint32_t)header_length);
    call->iov[call->iov_count++] = (struct iovec){.iov_base = call->prefix, .iov_len = sizeof call->prefix};
    call->iov[call->iov_count++] = (struct iovec){.iov_base = (void *)header, .iov_len = header_length};
    for (size_t i = 0; i < secret_count; i++) {
        if (secrets[i].length == 0 || secrets[i].length > MAXIMUM_SECRET_LENGTH) {
            snprintf(call->why, sizeof call->why, "the password is empty or longer than %d bytes", MAXIMUM_SECRET_LENGTH);
            finish(call, PP_BROKEN);
            return;
        }
        put_be32(call->lengths[i], (uint32_t)secrets[i].length);
        call->iov[call->iov_count++] = (struct iovec){.iov_base = call->lengths[i], .iov_len = 4};
        call->iov[call->iov_count++] = (struct iovec){.iov_base = (void *)secrets[i].bytes, .iov_len = secrets[i].length};
    }
}

void pp_call_as_user(struct pp_call *call, uid_t user)
{
    call->connect_as = user;
}

void pp_call_skip(struct pp_call *call)
{
    memset(call, 0, sizeof *call);
    call->fd = -1;
    call->socket_fd = -1;
    finish(call, PP_NOT_ASKED);
}

/* connect(2) with `uid` as the effective uid (which SO_PEERCRED reports) when the module
 * runs as root and `uid` is not root; the saved uid stays root, so root comes back at once. */
static int connect_as(int fd, const struct sockaddr_un *address, uid_t uid)
{
    if (uid == 0 || geteuid() != 0)
        return connect(fd, (const struct sockaddr *)address, sizeof *address);
    if (setresuid((uid_t)-1, uid, (uid_t)-1) != 0)
        return -1;
    int result = connect(fd, (const struct sockaddr *)address, sizeof *address);
    int error = errno;
    if (setresuid((uid_t)-1, 0, (uid_t)-1) != 0) { /* cannot happen: the saved uid is root's */
        result = -1;
        error = EPERM;
    }
    errno = error;
    return result;
}

/* Connects without waiting (a full backlog is a busy daemon, not a reason to hold a login)
 * and checks who serves: a process of an allowed uid, or nothing is sent. */
static void connect_call(struct pp_call *call)
{
    call->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (call->fd < 0) {
        snprintf(call->why, sizeof call->why, "cannot create a socket: %s", strerror(errno));
        finish(call, PP_BROKEN);
        return;
    }
    /* The system directory is root's: no user can mount there. In the user's runtime
     * directory, the socket found is the one connected to, through its descriptor, so no
     * mount made since is crossed. */
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    if (call->in_system_directory)
        snprintf(address.sun_path, sizeof address.sun_path, "%s", call->socket_path);
    else
        snprintf(address.sun_path, sizeof address.sun_path, "/proc/self/fd/%d", call->socket_fd);
    if (connect_as(call->fd, &address, call->in_system_directory ? call->connect_as : 0) != 0) {
        int error = errno;
        bool absent = error == ENOENT || error == ECONNREFUSED;
        snprintf(call->why, sizeof call->why, absent ? "no protfs daemon answers on %s" : "cannot connect to %s: %s",
                 call->socket_path, error == EAGAIN ? "the daemon is busy" : strerror(error));
        finish(call, absent ? PP_NO_DAEMON : PP_BROKEN);
        return;
    }
    struct ucred peer;
    socklen_t peer_length = sizeof peer;
    if (getsockopt(call->fd, SOL_SOCKET, SO_PEERCRED, &peer, &peer_length) != 0
        || (peer.uid != call->allowed[0] && peer.uid != call->allowed[1])) {
        snprintf(call->why, sizeof call->why, "%s is served by a process of uid %u, not one this user may trust",
                 call->socket_path, (unsigned)peer.uid);
        finish(call, PP_BROKEN);
        return;
    }
    call->phase = SENDING;
}

/* Sends what the socket takes now; true when the whole request is out. */
static bool send_some(struct pp_call *call)
{
    int first = 0;
    while (first < call->iov_count && call->iov[first].iov_len == 0)
        first++;
    if (first == call->iov_count)
        return true;
    struct msghdr message = {.msg_iov = call->iov + first, .msg_iovlen = (size_t)(call->iov_count - first)};
    ssize_t sent = sendmsg(call->fd, &message, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent < 0) {
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            snprintf(call->why, sizeof call->why, "cannot send the request: %s", strerror(errno));
            finish(call, PP_BROKEN);
        }
        return false;
    }
    size_t left = (size_t)sent;
    for (int i = first; i < call->iov_count && left > 0; i++) {
        size_t taken = left < call->iov[i].iov_len ? left : call->iov[i].iov_len;
        call->iov[i].iov_base = (char *)call->iov[i].iov_base + taken;
        call->iov[i].iov_len -= taken;
        left -= taken;
    }
    return call->iov[call->iov_count - 1].iov_len == 0;
}

/* Reads what has come into `buffer` (to `length` in all); true once it is complete. */
static bool receive_some(struct pp_call *call, void *buffer, size_t length)
{
    ssize_t got = recv(call->fd, (char *)buffer + call->have, length - call->have, MSG_DONTWAIT);
    if (got > 0) {
        call->have += (size_t)got;
        return call->have == length;
    }
    if (got == 0)
        snprintf(call->why, sizeof call->why, "the daemon closed the connection without a complete reply");
    else if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
        return false;
    else
        snprintf(call->why, sizeof call->why, "cannot read the reply: %s", strerror(errno));
    finish(call, PP_BROKEN);
    return false;
}

static void parse_reply(const char *json, size_t length, struct pp_reply *reply)
{
    char number[32];
    memset(reply, 0, sizeof *reply);
    reply->owner = -1;
    reply->passcode_set = -1;
    pp_json_scalar(json, length, "reply", reply->kind, sizeof reply->kind);
    pp_json_scalar(json, length, "state", reply->state, sizeof reply->state);
    if (pp_json_scalar(json, length, "owner", number, sizeof number) && number[0] >= '0' && number[0] <= '9')
        reply->owner = strtoll(number, NULL, 10);
    if (pp_json_scalar(json, length, "passcodeSet", number, sizeof number))
        reply->passcode_set = strcmp(number, "true") == 0 ? 1 : strcmp(number, "false") == 0 ? 0 : -1;
    if (pp_json_scalar(json, length, "exitCode", number, sizeof number))
        reply->exit_code = atoi(number);
    pp_json_scalar(json, length, "message", reply->message, sizeof reply->message);
}

/* Takes the call as far as it goes without waiting; the events it waits for next (0 when
 * finished). */
static short advance(struct pp_call *call)
{
    if (call->phase == CONNECTING)
        connect_call(call);
    if (call->phase == SENDING) {
        if (!send_some(call))
            return call->phase == FINISHED ? 0 : POLLOUT;
        call->phase = READING_LENGTH;
        call->have = 0;
    }
    if (call->phase == READING_LENGTH) {
        if (!receive_some(call, call->length_bytes, sizeof call->length_bytes))
            return call->phase == FINISHED ? 0 : POLLIN;
        const unsigned char *b = call->length_bytes;
        call->json_length = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
        call->json = call->json_length >= 1 && call->json_length <= MAXIMUM_REPLY_LENGTH ? malloc(call->json_length) : NULL;
        if (call->json == NULL) {
            snprintf(call->why, sizeof call->why, "the daemon's reply has a bad length (%u bytes)", (unsigned)call->json_length);
            finish(call, PP_BROKEN);
            return 0;
        }
        call->phase = READING_REPLY;
        call->have = 0;
    }
    if (call->phase == READING_REPLY) {
        if (!receive_some(call, call->json, call->json_length))
            return call->phase == FINISHED ? 0 : POLLIN;
        parse_reply(call->json, call->json_length, &call->reply);
        finish(call, PP_REPLIED);
    }
    return 0;
}

void pp_call_all(struct pp_call *calls, size_t count, const struct pp_deadline *deadline)
{
    struct pollfd *waiting = calloc(count ? count : 1, sizeof *waiting);
    for (size_t i = 0; waiting == NULL && i < count; i++) {
        snprintf(calls[i].why, sizeof calls[i].why, "out of memory");
        finish(&calls[i], PP_BROKEN);
    }
    for (;;) {
        size_t n = 0;
        for (size_t i = 0; i < count; i++) {
            short events = calls[i].phase == FINISHED ? 0 : advance(&calls[i]);
            if (events != 0)
                waiting[n++] = (struct pollfd){.fd = calls[i].fd, .events = events};
        }
        int left = pp_deadline_left(deadline);
        if (n == 0 || left == 0 || (poll(waiting, n, left) < 0 && errno != EINTR))
            break;
    }
    for (size_t i = 0; i < count; i++) {
        if (calls[i].phase != FINISHED) {
            snprintf(calls[i].why, sizeof calls[i].why, "the daemon did not answer in time (it may be stopped or hung)");
            finish(&calls[i], PP_TIMED_OUT);
        }
    }
    free(waiting);
}
