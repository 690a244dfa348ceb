"""The process: serving (one worker or several), the embedded database, logs and metrics."""
