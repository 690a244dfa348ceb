"""The golden replay corpus of the cryptid battle engine (see gen.py)."""
