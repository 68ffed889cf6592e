"""A real Jupyter front end for TestKilledFrontEnd (jupyter_client, Debian's python3).

    python3 client.py CONNECTION_FILE start   sends a long cell, prints "sent", then waits to be killed
    python3 client.py CONNECTION_FILE run     runs `x := 20 + 22; x` and prints "result <text/plain>"
"""
import sys
import time

import jupyter_client

conn, mode = sys.argv[1], sys.argv[2]
c = jupyter_client.BlockingKernelClient(connection_file=conn)
c.load_connection_file()
c.start_channels()
c.wait_for_ready(timeout=60)

if mode == "start":
    c.execute("for i := 0; i < 40; i++ {\n\tfmt.Println(i)\n\ttime.Sleep(50 * time.Millisecond)\n}")
    print("sent", flush=True)
    time.sleep(120)  # killed by the test while the cell runs
elif mode == "run":
    results = []

    def hook(msg):
        if msg["header"]["msg_type"] == "execute_result":
            results.append(msg["content"]["data"]["text/plain"])

    reply = c.execute_interactive("x := 20 + 22\nx", timeout=60, output_hook=hook)
    print("status", reply["content"]["status"])
    print("result", " ".join(results), flush=True)
c.stop_channels()
