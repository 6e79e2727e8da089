# The handler baked into the Python test worker image: runpod-python's own worker, unmodified.
# What a job does is chosen by its input, with the same vocabulary as node-test-handler.ts:
#   {sleep_ms, progress: [..], fail: "msg", output: X, refresh: true}  (sync-style handler), or
#   {stream: [..], stream_delay_ms, fail}  with GPUFLEET_TEST_HANDLER=stream (a generator handler:
#   runpod-python decides streaming from the handler's type at start, not per job).
# GPUFLEET_TEST_REFRESH_WORKER=true / GPUFLEET_TEST_AGGREGATE_STREAM=true / GPUFLEET_TEST_CONCURRENCY=N
# set the worker's refresh_worker / return_aggregate_stream / concurrency_modifier.
import asyncio
import os

import runpod


def _input(job):
    inp = job.get("input")
    return inp if isinstance(inp, dict) else {}


async def handler(job):
    inp = _input(job)
    if inp.get("sleep_ms"):
        await asyncio.sleep(inp["sleep_ms"] / 1000)
    for value in inp.get("progress") or []:
        runpod.serverless.progress_update(job, value)
    if inp.get("progress"):
        await asyncio.sleep(0.5)  # progress_update posts from its own thread; let it land first
    if inp.get("fail"):
        raise RuntimeError(str(inp["fail"]))
    out = inp["output"] if "output" in inp else {"echo": job.get("input")}
    if inp.get("refresh") and isinstance(out, dict):
        out = dict(out, refresh_worker=True)
    return out


async def stream_handler(job):
    inp = _input(job)
    for item in inp.get("stream") or []:
        if inp.get("stream_delay_ms"):
            await asyncio.sleep(inp["stream_delay_ms"] / 1000)
        yield item
    if inp.get("fail"):
        raise RuntimeError(str(inp["fail"]))


_concurrency = int(os.environ.get("GPUFLEET_TEST_CONCURRENCY", "1"))
runpod.serverless.start({
    "handler": stream_handler if os.environ.get("GPUFLEET_TEST_HANDLER") == "stream" else handler,
    "refresh_worker": os.environ.get("GPUFLEET_TEST_REFRESH_WORKER") == "true",
    "return_aggregate_stream": os.environ.get("GPUFLEET_TEST_AGGREGATE_STREAM") == "true",
    "concurrency_modifier": lambda _current: _concurrency,
})
