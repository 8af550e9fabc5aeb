"""What a server's Prometheus `/metrics` says, UI-free: the parsed scrape, the typed snapshot an
engine's metric catalogue reads from it, rates and percentiles over two scrapes, and the alerts
that need no log. The engines' metric names live behind the engine seam
(`kvtui/engines/<name>/metrics.py`); the HTTP scrape lives in `kvtui.sources.metrics`.
"""
