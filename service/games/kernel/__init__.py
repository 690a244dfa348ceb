"""What every game shares (docs/architecture.md#the-match-kernel).

- `protocol`: the `Game` every turn-based game implements, events, outcomes, options, `rebuild`.
- `prompts`: what a seat is asked (`Prompt`), and its fingerprint for per-seat guard versions.
- `hidden`: `Hidden` marks and the one redaction of views and events (`redact`, `reveal`).
- `loadouts`: `LoadoutError` and the deck-list rules card games share (`check_deck`).
- `series`: best of N over any game.
- `table`: `TableGame`, what the kernel implements for a game: apply, resign, replay, storage.
- `state`: `GameState`, every game's state, and how the kernel copies, dumps and loads it.
- `content`: `ContentError` and the readers every game's content data is checked with.
- `rng`: SplitMix64 and the sub-seed functions.
"""
