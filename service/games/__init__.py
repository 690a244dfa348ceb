"""Pure game rules: no I/O, no asyncio, no clock; randomness only from `rng.SplitMix64`."""
