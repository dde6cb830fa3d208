"""A quick check that a download host can be reached, before tfds tries.

Without network, tfds's downloader retries silently for minutes; a run with
no local data should instead fail in seconds and say where to put the files.
"""

import socket
import threading
import urllib.parse
import urllib.request

TIMEOUT_S = 3.0


def endpoint(url: str) -> tuple[str, int]:
  """The (host, port) a download of `url` connects to: its proxy's when one is set."""
  parts = urllib.parse.urlsplit(url)
  proxy = urllib.request.getproxies().get(parts.scheme)
  if proxy and not urllib.request.proxy_bypass(parts.hostname or ''):
    parts = urllib.parse.urlsplit(proxy if '//' in proxy else '//' + proxy)
  port = parts.port or (443 if parts.scheme == 'https' else 80)
  return parts.hostname or '', port


def reachable(url: str, timeout: float = TIMEOUT_S) -> bool:
  """Whether a TCP connection to `url`'s host opens within about `timeout` seconds.

  The connection runs in a daemon thread because the name lookup has no
  timeout of its own; a lookup still hanging after `timeout` counts as
  unreachable.
  """
  host, port = endpoint(url)
  outcome = []

  def connect():
    try:
      socket.create_connection((host, port), timeout=timeout).close()
      outcome.append(True)
    except OSError:
      outcome.append(False)

  thread = threading.Thread(target=connect, daemon=True)
  thread.start()
  thread.join(timeout)
  return outcome == [True]
