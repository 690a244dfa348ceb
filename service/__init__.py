"""Asynchronous game backend: the cryptid autobattler and turn-based tabletop matches."""
