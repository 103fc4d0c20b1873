"""Poll Triton readiness endpoints until a stop file appears; write what was seen as JSON.

Run on the guest in the background by verify.yml around a rerun of the serving play that changes a
setting of every server: the rerun must replace the servers one at a time, so at every poll at
least one endpoint answers /v2/health/ready, and each endpoint was down at some poll (it was
replaced inside the window, not before or after it).
Usage: poll_ready.py STOP_FILE OUT_FILE INTERVAL LIMIT ENDPOINT...
"""
import json
import os
import sys
import time
import urllib.request


def ready(endpoint):
    try:
        with urllib.request.urlopen(endpoint + '/v2/health/ready', timeout=1) as response:
            return response.status == 200
    except Exception:  # pylint: disable=broad-except  # refused, reset, timed out, 503: not ready
        return False


def main(argv):
    stop, out, interval, limit = argv[0], argv[1], float(argv[2]), float(argv[3])
    endpoints = argv[4:]
    start = time.monotonic()
    samples = []
    while not os.path.exists(stop) and time.monotonic() - start < limit:
        samples.append((round(time.monotonic() - start, 2), [ready(e) for e in endpoints]))
        time.sleep(interval)
    summary = {
        'samples': len(samples),
        'seconds': round(time.monotonic() - start, 1),
        'stopped': os.path.exists(stop),
        # Polls at which no endpoint was ready: the node served nothing then.
        'none_ready_at': [t for t, row in samples if not any(row)],
        'not_ready_polls': dict((e, sum(1 for _t, row in samples if not row[i])) for i, e in enumerate(endpoints)),
    }
    with open(out + '.tmp', 'w') as handle:
        json.dump(summary, handle)
    os.rename(out + '.tmp', out)


if __name__ == '__main__':
    main(sys.argv[1:])
