// libfuse API level 3.12, the level protfs is written and tested against.
#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#include <sys/xattr.h>
// The kernel's wire structures (fuse_in_header, fuse_read_in, opcodes), for the request loop.
#include <linux/fuse.h>
