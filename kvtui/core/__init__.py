"""UI-free facts, alerts and capacity arithmetic.

Imports `parsers`; never Textual, Rich or paramiko (a test enforces it).
"""
