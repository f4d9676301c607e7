#!/usr/bin/env python3
"""A TCP proxy that adds a round trip's latency to every request: object storage as far away
as a cloud region, in front of a local S3 server (moto, s3s-fs).

    python scripts/bench/latency_proxy.py --upstream 127.0.0.1:PORT [--port 0] [--delay-ms 20]

Each piece of a request (what the client sends before it waits for the answer) reaches the
server `--delay-ms` later; answers pass at once. Connections are independent, so requests
in flight wait side by side, as on a network. Prints the port it listens on, then serves
until stopped. Used by BENCHMARKS.md ("Object storage at a distance").
"""
from __future__ import annotations

import argparse
import asyncio


async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: float) -> None:
    try:
        while data := await reader.read(1 << 16):
            if delay:
                await asyncio.sleep(delay)
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        writer.close()


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--upstream", required=True, help="HOST:PORT of the server")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--delay-ms", type=float, default=20.0)
    a = ap.parse_args()
    host, port = a.upstream.rsplit(":", 1)
    delay = a.delay_ms / 1000.0

    async def serve(cr: asyncio.StreamReader, cw: asyncio.StreamWriter) -> None:
        try:
            sr, sw = await asyncio.open_connection(host, int(port))
        except OSError:
            cw.close()
            return
        await asyncio.gather(pipe(cr, sw, delay), pipe(sr, cw, 0.0))

    server = await asyncio.start_server(serve, "127.0.0.1", a.port, backlog=1024)
    print(server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
