"""Drives runpod-python's job client, `runpod.Endpoint` (the unmodified client from ../shared/peers/),
for the job interface tests: the tests send operations, the client sends its requests exactly as it
does for its users (Bearer key, JSON content type with an empty body on cancel and purge-queue), and
the tests check what it returns or raises.

Protocol, one JSON document per line on stdin, one JSON line per document on stdout:
  in:  {"op": "run"|"run_sync"|"status"|"output"|"stream"|"cancel"|"health"|"purge_queue",
        "endpoint": "<id>", "apiKey": "<key>", "request": {...}, "job": "<job id>", "timeout": n}
  out: {"ok": <value>} | {"error": {"type": "...", "message": "..."}}
`run` answers the job id; the Job object is kept for the ops that name it. The control plane's
`/v2` base comes from argv[1] and is set as runpod.endpoint_url_base before any Endpoint is made.
"""

import json
import sys

OUT = sys.stdout
sys.stdout = sys.stderr

import runpod  # noqa: E402

runpod.endpoint_url_base = sys.argv[1]

jobs = {}


def endpoint(doc):
    return runpod.Endpoint(doc["endpoint"], api_key=doc.get("apiKey"))


def handle(doc):
    op = doc["op"]
    if op == "run":
        job = endpoint(doc).run(doc["request"])
        jobs[job.job_id] = job
        return job.job_id
    if op == "run_sync":
        return endpoint(doc).run_sync(doc["request"], timeout=doc.get("timeout", 60))
    if op == "health":
        return endpoint(doc).health()
    if op == "purge_queue":
        return endpoint(doc).purge_queue()
    job = jobs[doc["job"]]
    if op == "status":
        return job.status()
    if op == "output":
        return job.output(timeout=doc.get("timeout", 0))
    if op == "stream":
        return list(job.stream())
    if op == "cancel":
        return job.cancel()
    raise ValueError(f"unknown op {op}")


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        doc = json.loads(line)
        try:
            result = {"ok": handle(doc)}
        except Exception as exc:  # pylint: disable=broad-except
            result = {"error": {"type": type(exc).__name__, "message": str(exc)}}
        OUT.write(json.dumps(result, default=repr) + "\n")
        OUT.flush()


if __name__ == "__main__":
    main()
