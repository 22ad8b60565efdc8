// 312, not 35: with older API levels Swift cannot see fuse_session_loop_mt with a config.
#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#include <sys/xattr.h>
