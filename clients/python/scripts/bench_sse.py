"""The decoder benchmark (bench/decoders.ts): decodes the recorded event stream in 64 KiB
reads through the client's SseDecoder and prints one JSON line per round with MB/s.

    python3 scripts/bench_sse.py FILE [ROUNDS]
"""
from __future__ import annotations

import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

from agenticdriver._sse import SseDecoder  # noqa: E402


def main() -> None:
    path = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    with open(path, "rb") as handle:
        body = handle.read()
    reads = [body[i : i + 65536] for i in range(0, len(body), 65536)]
    for _ in range(rounds):
        started = time.perf_counter()
        decoder = SseDecoder()
        frames = 0
        for read in reads:
            for _frame in decoder.feed(read):
                frames += 1
        seconds = time.perf_counter() - started
        print("AD_SSE_BENCH " + json.dumps({"frames": frames, "mbPerS": round(len(body) / 1e6 / seconds, 1)}), flush=True)


if __name__ == "__main__":
    main()
