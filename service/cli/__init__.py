"""Command-line tools beside the service (the terminal's counterpart of `api`)."""
