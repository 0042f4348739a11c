"""Forwards TCP connections on 127.0.0.1:PORT to a Unix socket, so that tools
that speak HTTP only over TCP (schemathesis) can reach the control socket.

    python3 unix_proxy.py SOCKET PORT
"""
import asyncio
import sys


async def pipe(reader, writer):
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        try:
            writer.write_eof()
        except (OSError, RuntimeError):
            pass


async def main(socket_path, port):
    async def handle(client_reader, client_writer):
        try:
            unix_reader, unix_writer = await asyncio.open_unix_connection(socket_path)
        except OSError:
            client_writer.close()
            return
        await asyncio.gather(pipe(client_reader, unix_writer), pipe(unix_reader, client_writer))
        client_writer.close()
        unix_writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", port)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
