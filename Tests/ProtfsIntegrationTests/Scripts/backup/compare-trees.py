#!/usr/bin/env python3
"""compare-trees.py A B [SKIP...]: every entry of the two trees alike: type, mode, owner, nanosecond
modification times (and access times of regular files, taken before any content is read: a
restored symlink's is not kept, as reading it through the mount updates it, its ctime being new),
size, link count, every extended attribute (classes included), symlink targets and contents.
Entries named SKIP at the top of the trees, and what they hold, are left out. Prints the
differences and exits 1 when there are any."""
import os, sys


def collect(root):
    entries = {}
    for directory, names, files in os.walk(root):
        for name in names + files:
            path = os.path.join(directory, name)
            st = os.lstat(path)
            entries[os.path.relpath(path, root)] = (path, st)
    entries["."] = (root, os.lstat(root))
    return entries


def facts(path, st):
    kind = st.st_mode & 0o170000
    out = {"mode": st.st_mode, "uid": st.st_uid, "gid": st.st_gid, "mtime": st.st_mtime_ns, "nlink": st.st_nlink}
    if kind != 0o040000:
        out["size"] = st.st_size
    if kind == 0o100000:
        out["atime"] = st.st_atime_ns
    if kind == 0o120000:
        out["target"] = os.readlink(path)
    else:
        out["xattrs"] = {n: os.getxattr(path, n, follow_symlinks=False) for n in sorted(os.listxattr(path, follow_symlinks=False))}
    return out


def without_skipped(entries):
    skipped = sys.argv[3:]
    return {k: v for k, v in entries.items() if not any(k == s or k.startswith(s + "/") for s in skipped)}


a, b = without_skipped(collect(sys.argv[1])), without_skipped(collect(sys.argv[2]))
stats_a = {k: facts(*v) for k, v in a.items()}
stats_b = {k: facts(*v) for k, v in b.items()}
problems = [f"only in one tree: {k}" for k in sorted(set(a) ^ set(b))]
for key in sorted(set(a) & set(b)):
    if stats_a[key] != stats_b[key]:
        problems.append(f"{key}: {stats_a[key]} != {stats_b[key]}")
    elif a[key][1].st_mode & 0o170000 == 0o100000:
        with open(a[key][0], "rb") as fa, open(b[key][0], "rb") as fb:
            while True:
                ca, cb = fa.read(1 << 20), fb.read(1 << 20)
                if ca != cb:
                    problems.append(f"{key}: contents differ")
                    break
                if not ca:
                    break
print("\n".join(problems))
print(f"{len(a)} entries compared")
sys.exit(1 if problems else 0)
