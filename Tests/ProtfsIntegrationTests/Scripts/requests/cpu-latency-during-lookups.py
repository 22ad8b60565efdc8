#!/usr/bin/env python3
# Usage: cpu-latency-during-lookups.py MOUNT. Lookups of names that do not exist, one after
# another, while the system's CPU latency target is sampled: exits 0 once it reads 0.
import os, struct, sys, threading
stop = threading.Event()
def stream():
    i = 0
    while not stop.is_set():
        try: os.stat(os.path.join(sys.argv[1], "missing-%d" % i))
        except FileNotFoundError: pass
        i += 1
worker = threading.Thread(target=stream)
worker.start()
seen = set()
for _ in range(400):
    with open("/dev/cpu_dma_latency", "rb") as qos:
        seen.add(struct.unpack("i", qos.read(4))[0])
    if 0 in seen: break
    stop.wait(0.005)
stop.set(); worker.join()
sys.exit(0 if 0 in seen else "target never 0 during the stream: %s" % sorted(seen))
