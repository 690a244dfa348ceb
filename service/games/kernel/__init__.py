"""What every game shares (DESIGN §3, §5).

- `protocol`: the `Game` every turn-based game implements, events, outcomes, options, `rebuild`.
- `prompts`: what a seat is asked (`Prompt`), and its fingerprint for per-seat guard versions.
- `hidden`: `Hidden` marks and the one redaction of views and events (`redact`, `reveal`).
- `loadouts`: `LoadoutError` and the deck-list rules card games share (`check_deck`).
- `series`: best of N over any game.
- `rng`: SplitMix64 and the sub-seed functions.
"""
