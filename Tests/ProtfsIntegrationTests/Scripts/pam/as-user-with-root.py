"""Runs COMMAND with the real uid of UID and the effective uid 0, as a set-uid root
program such as passwd(1) runs for a user: pam_unix then asks for the current password in
chauthtok, as it does for the user (and not for root).

Usage: as-user-with-root.py UID COMMAND [ARGUMENT...]
"""
import os
import sys

uid = int(sys.argv[1])
os.setresuid(uid, 0, 0)
os.execvp(sys.argv[2], sys.argv[2:])
