/* The few values the module reads from a daemon's reply (docs/CONTROL.md): a scalar by
 * its key, at any depth. Replies are small flat objects; the daemon is trusted no further
 * than that: any malformed text just yields "not found". */
#ifndef PROTFS_PAM_REPLY_JSON_H
#define PROTFS_PAM_REPLY_JSON_H

#include <stdbool.h>
#include <stddef.h>

/* Copies the value of the first member named `key` (a string without its quotes and with
 * escapes reduced to one byte, or a number or literal as written) into `out`, NUL-terminated
 * and truncated to `size`, every byte outside printable ASCII made '?': the module logs these
 * values, and a raw newline or control byte would forge lines in the auth log. False when
 * there is no such member. */
bool pp_json_scalar(const char *json, size_t length, const char *key, char *out, size_t size);

#endif
