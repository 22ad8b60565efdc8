#!/usr/bin/env python3
# The measuring half of bench/sleep-lock (Debian's python3: dbus, dbusmock). Arguments:
# PROTFSCTL MOUNTPOINT PASSCODE_FILE SCRATCH FILES OPEN ROUNDS. Fills the vault, caches
# every file, holds OPEN of them open, starts follow on private buses, then per round:
# unlock, re-read every file, PrepareForSleep(true), time until the inhibitor is gone.
import os, subprocess, sys, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "ProtfsIntegrationTests", "Scripts"))
from private_buses import Bus, Logind, stop_all, wait_until  # noqa: E402

ctl, mnt, passcode, scratch = sys.argv[1:5]
files, held_open, rounds = (int(n) for n in sys.argv[5:8])
paths = ["%s/d%d/f%d" % (mnt, i // 1000, i) for i in range(files)]


def cache_every_file():
    for path in paths:
        with open(path, "rb") as f:
            f.read()


for d in range(files // 1000 + 1):
    os.makedirs("%s/d%d" % (mnt, d), exist_ok=True)
for path in paths:
    with open(path, "wb") as f:
        f.write(os.urandom(4096))
held = [open(path, "rb") for path in paths[:held_open]]

system = Bus(os.path.join(scratch, "system_bus_socket"))
logind = follow = None
try:
    with open(os.path.join(scratch, "mock.log"), "w") as log:
        logind = Logind(system, log)
    logind.add_session("bench")
    env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=system.address)
    follow = subprocess.Popen([ctl, "follow", mnt, "--on", "sleep"], env=env,
                              stderr=open(os.path.join(scratch, "follow.log"), "w"))
    for round_ in range(rounds):
        with open(passcode) as p:
            subprocess.run([ctl, "unlock", mnt], stdin=p, check=True, capture_output=True, timeout=120)
        cache_every_file()
        wait_until(lambda: len(logind.inhibitors()) == 1, 30, "follow's inhibitor")
        start = time.monotonic()
        logind.prepare_for_sleep(True)
        while len(logind.inhibitors()) > 0:
            time.sleep(0.001)
        took = time.monotonic() - start
        print("files=%d held-open=%d round %d: PrepareForSleep(true) to inhibitor released: %.3f s"
              % (files, held_open, round_ + 1, took), flush=True)
        logind.prepare_for_sleep(False)
finally:
    for f in held:
        f.close()
    if follow is not None:
        follow.kill()
        follow.wait(10)
    stop_all(logind, system)
