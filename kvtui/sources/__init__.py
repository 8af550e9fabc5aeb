"""Where log lines come from: local files (replay, follow) and SSH. No Textual here."""
