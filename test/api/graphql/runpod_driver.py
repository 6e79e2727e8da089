"""Drives runpod-python's own API functions (the unmodified client, ../shared/peers/) for the
compatibility tests in runpod-python.test.ts: the tests send calls, the client builds and sends its
GraphQL documents exactly as it does for its users, and the tests check what it returns or raises.

Protocol, one JSON document per line on stdin, one JSON line per document on stdout:
  in:  {"apiKey": "gf_...", "calls": [{"fn": "create_pod", "args": [...], "kwargs": {...}}, ...]}
       a call may carry its own "apiKey" (null: no key at all); "fn" is a name in the runpod package,
       dotted for submodules ("api.queries.pods.generate_pod_query"); a name that is not callable
       (a document constant such as "api.queries.gpus.QUERY_GPU_TYPES") returns its value
  out: [{"ok": <return value>} | {"error": {"type": "QueryError", "message": "..."}}, ...]
The control plane's origin comes from RUNPOD_API_BASE_URL, which the client reads on every call.
Run with Debian's /usr/bin/python3 and PYTHONPATH from setup-python-peers.sh.
"""

import importlib
import json
import sys

# the replies own stdout; anything the client prints goes to stderr
OUT = sys.stdout
sys.stdout = sys.stderr

import runpod  # noqa: E402  (after the stdout swap: importing may log)


def resolve(name):
    """runpod.<name>, importing submodules on the way (api.queries.pods.generate_pod_query)."""
    obj = runpod
    path = "runpod"
    for part in name.split("."):
        path = f"{path}.{part}"
        if not hasattr(obj, part):
            importlib.import_module(path)
        obj = getattr(obj, part)
    return obj


def call(spec, default_key):
    runpod.api_key = spec["apiKey"] if "apiKey" in spec else default_key
    try:
        fn = resolve(spec["fn"])
        if not callable(fn):
            return {"ok": fn}
        return {"ok": fn(*spec.get("args", []), **spec.get("kwargs", {}))}
    except Exception as exc:  # pylint: disable=broad-except
        return {"error": {"type": type(exc).__name__, "message": str(exc)}}


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        results = [call(c, request.get("apiKey")) for c in request["calls"]]
        OUT.write(json.dumps(results, default=repr) + "\n")
        OUT.flush()


if __name__ == "__main__":
    main()
