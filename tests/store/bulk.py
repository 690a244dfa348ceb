"""The tables that grow, bulk-loaded as a busy service would have filled them, and one player
whose own lists grew long.

Set-based (INSERT … SELECT generate_series) on one connection with
`session_replication_role = replica`, which skips triggers and foreign-key checks, except where
triggers keep roll-ups the service reads (FIRE: the boards' rank counts, the match figures):
those rows are loaded as the service writes them. Ids are derived from numbers
(`md5('p' || n)::uuid` is player n), so that rows refer to each other without a look-up. Every
column is named, so that a column added meanwhile with a default changes nothing here. The rows
the service may read of another player are real ones: ghosts hold valid warbands of the
current ruleset, lobby matches real options, runs a real shop, so that a request that meets
them is served as it would be.
"""

import json
import time
import uuid
from dataclasses import dataclass
from datetime import datetime

import asyncpg

from service.games.cryptids.content import DEFAULT_RULESET, load_ruleset
from service.games.cryptids.shop import new_shop
from service.games.registry import get_game

# How many; the module docstring of tests/store/test_bounded_reads.py says why these sizes.
PLAYERS = 100_000
RUNS = 50_000
SNAPSHOTS = 60_000  # in the current week's partition, and a fifth as many in the default one
BATTLES = SNAPSHOTS
MATCHES = 30_000
EVENTS_PER_MATCH = 6  # of the matches whose events are kept
ACTIONS_PER_MATCH = 2
TICKETS = 30_000
SEARCHING_TICKETS = 200
IDEMPOTENCY_KEYS = 30_000
SESSIONS = 40_000
RATED_PER_GAME = 15_000
RATED_PAIRS = 20_000
RATE_BUCKETS = 12_000
# Rows of the heavy player's own lists (devices, sessions, runs, matches, tickets, keys…).
HEAVY = 3_000

# Marks a statement run with triggers and foreign keys on: those whose triggers keep roll-ups
# (rank counts, match figures) that the service reads. Every other one skips them.
FIRE = "/* triggers fire */"
GAMES = ("necromancers", "fate-duel", "loyalty", "medianokte")
WARBAND = json.dumps([["mothman", 0, 1]])
# A run's shop as the service stores it (a list of runs shows each run's).
SHOP = json.dumps(new_shop(load_ruleset(DEFAULT_RULESET), 1).to_dict())


def player(n: str) -> str:
    """Player number `n` (an SQL expression) as its id."""
    return f"md5('p' || ({n}))::uuid"


def _options(game: str, seats: int) -> str:
    return json.dumps(get_game(game).check_options(seats, {}))


def _games_case(column: str, seats: int) -> tuple[str, str, str]:
    """SQL expressions of the game, ruleset and resolved options for a number in `column`."""
    game = "CASE " + " ".join(f"WHEN {column} % 4 = {i} THEN '{g}'" for i, g in enumerate(GAMES))
    ruleset = "CASE " + " ".join(
        f"WHEN {column} % 4 = {i} THEN '{get_game(g).ruleset}'" for i, g in enumerate(GAMES)
    )
    options = "CASE " + " ".join(
        f"WHEN {column} % 4 = {i} THEN '{_options(g, seats)}'::jsonb" for i, g in enumerate(GAMES)
    )
    return game + " END", ruleset + " END", options + " END"


GAME, RULESET, OPTIONS = _games_case("i", 2)


def _statements(season: str) -> list[str]:
    # $1 is the load's clock, `week` the seconds of this week (UTC) behind it: current-week
    # rows fall in its partition.
    week = (
        "greatest(1, least(6 * 86400, extract(epoch FROM $1::timestamptz"
        " - (date_trunc('week', $1::timestamptz AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')) - 60))"
    )
    snapshot_at = f"$1::timestamptz - make_interval(secs => (i % {week}::int))"
    old_snapshot_at = "$1::timestamptz - interval '60 days' - make_interval(secs => i * 10)"
    matched_status = (
        "CASE WHEN i % 100 = 0 THEN 'waiting' WHEN i % 10 = 1 THEN 'active'"
        " WHEN i % 20 = 2 THEN 'expired' ELSE 'finished' END"
    )
    return [
        # Players, ratings spread around 1000; 10 % signed out everywhere within the last 30
        # days. (A twenty-fifth are deleted at the end, as the service deletes them.)
        f"""{FIRE}
        INSERT INTO players (player_id, name, tag, rating, created_at, tokens_after)
        SELECT {player("i")}, 'bulk' || i, (i % 10000)::smallint,
               CASE WHEN i % 25 = 0 THEN 1000 ELSE 700 + (i::bigint * 7919) % 700 END,
               $1::timestamptz - make_interval(days => 5 + i % 400),
               CASE WHEN i % 10 = 0 THEN $1::timestamptz - make_interval(secs => i * 13 % 2592000)
               END
          FROM generate_series(1, {PLAYERS}) i
        """,
        # One run each: one in ten still open (touched now, so not idle), the others ended.
        f"""
        INSERT INTO runs (run_id, player_id, ruleset, seed, status, lives, wins, shop,
                          rating_at_start, rating_change, created_at, updated_at, ended_at,
                          version, met)
        SELECT md5('r' || i)::uuid, {player("i")}, '{DEFAULT_RULESET}', i,
               CASE WHEN i % 10 = 0 AND i % 25 <> 0 THEN 'shopping'
                    WHEN i % 3 = 0 THEN 'won' ELSE 'lost' END,
               2, 3, '{SHOP}', 1000, 0, $1::timestamptz - make_interval(hours => i % 2000),
               $1::timestamptz,
               CASE WHEN i % 10 = 0 AND i % 25 <> 0 THEN NULL ELSE $1::timestamptz END, 5, '{{}}'
          FROM generate_series(1, {RUNS}) i
        """,
        # Snapshots, rounds 1 to 10, a valid warband each (the scenario's turns are paired
        # with them); ids given, so that battles name them.
        f"""
        INSERT INTO snapshots (snapshot_id, run_id, player_id, round, ruleset, rating, wins,
                               lives, warband, is_bot, created_at)
        SELECT i, md5('r' || (1 + i / 10 % {RUNS}))::uuid, {player(f"1 + i / 10 % {RUNS}")},
               1 + i % 10, '{DEFAULT_RULESET}', 700 + (i::bigint * 7919) % 700, i % 5, 1 + i % 5,
               '{WARBAND}', false, {snapshot_at}
          FROM generate_series(1, {SNAPSHOTS}) i
        """,
        f"""
        INSERT INTO snapshots (snapshot_id, run_id, player_id, round, ruleset, rating, wins,
                               lives, warband, is_bot, created_at)
        SELECT i, md5('r' || (1 + i % {RUNS}))::uuid, {player(f"1 + i % {RUNS}")},
               1 + i % 10, '{DEFAULT_RULESET}', 700 + (i::bigint * 7919) % 700, i % 5, 1 + i % 5,
               '{WARBAND}', false, {old_snapshot_at}
          FROM generate_series({SNAPSHOTS} + 1, {SNAPSHOTS} + {SNAPSHOTS // 5}) i
        """,
        # A battle per snapshot, against the snapshot after it, in the same partition.
        f"""
        INSERT INTO battles (battle_id, run_id, round, player_snapshot_id, player_snapshot_at,
                             ghost_snapshot_id, ghost_snapshot_at, ghost_player_id, ruleset, seed,
                             pairing, rating_gap, pairing_ms, winner, rolls, health_player,
                             health_ghost, rating_change, lives_after, wins_after, status_after,
                             rating_pending, created_at, unrated)
        SELECT i, md5('r' || (1 + i / 10 % {RUNS}))::uuid, 1 + i % 10, i, {snapshot_at},
               i + 1, {snapshot_at.replace("i %", "(i + 1) %")},
               {player(f"1 + (i + 1) / 10 % {RUNS}")}, '{DEFAULT_RULESET}', i,
               'same_round_100', i % 100, 0.5, 'player', 7, 3, 0, 0, 3, 1, 'shopping', 0,
               {snapshot_at}, 'new_account'
          FROM generate_series(1, {BATTLES - 1}) i
        """,
        f"""
        INSERT INTO battles (battle_id, run_id, round, player_snapshot_id, player_snapshot_at,
                             ghost_snapshot_id, ghost_snapshot_at, ghost_player_id, ruleset, seed,
                             pairing, rating_gap, pairing_ms, winner, rolls, health_player,
                             health_ghost, rating_change, lives_after, wins_after, status_after,
                             rating_pending, created_at, unrated)
        SELECT i, md5('r' || (1 + i % {RUNS}))::uuid, 1 + i % 10, i, {old_snapshot_at},
               i, {old_snapshot_at}, {player(f"1 + (i + 1) % {RUNS}")}, '{DEFAULT_RULESET}', i,
               'same_round_100', i % 100, 0.5, 'ghost', 7, 0, 3, 0, 3, 1, 'shopping', 0,
               {old_snapshot_at}, 'new_account'
          FROM generate_series({SNAPSHOTS} + 1, {SNAPSHOTS} + {SNAPSHOTS // 5}) i
        """,
        "SELECT setval('snapshots_snapshot_id_seq', 10000000)",
        "SELECT setval('battles_battle_id_seq', 10000000)",
        # Matches of every game: 1 % waiting (a lobby of 300), 10 % active, 5 % expired
        # lately, the rest finished over the last 30 days; those ended more than 8 days ago had
        # their events swept, as the sweeper would have, except one in fifty still to sweep.
        # Nothing is due: the sweeper has no turn of these to play.
        f"""
        INSERT INTO matches (match_id, game, ruleset, seed, seats, options, status, version,
                             last_seq, state, outcome, turn_seconds, due_at, created_by,
                             created_at, finished_at, events_swept_at)
        SELECT md5('m' || i)::uuid, {GAME}, {RULESET}, i, 2, {OPTIONS}, {matched_status},
               {ACTIONS_PER_MATCH}, {EVENTS_PER_MATCH}, '{{}}', NULL, NULL,
               CASE WHEN i % 100 = 0 THEN $1::timestamptz + interval '1 day' END,
               {player(f"1 + i % {PLAYERS}")},
               $1::timestamptz - make_interval(mins => i % 43200) - interval '1 hour',
               CASE WHEN i % 100 = 0 OR i % 10 = 1 THEN NULL
                    WHEN i % 20 = 2 THEN $1::timestamptz - make_interval(mins => i % 7000)
                    ELSE $1::timestamptz - make_interval(mins => i % 43200) END,
               CASE WHEN i % 100 <> 0 AND i % 10 <> 1 AND i % 20 <> 2 AND i % 50 <> 3
                     AND i % 43200 > 11520 THEN $1::timestamptz END
          FROM generate_series(1, {MATCHES}) i
        """,
        # Two seats each; a waiting match's second seat is free.
        f"""
        INSERT INTO match_seats (match_id, seat, player_id, bot, joined_at, loadout, guard, prompt)
        SELECT md5('m' || i)::uuid, s,
               CASE WHEN s = 1 AND i % 100 = 0 THEN NULL
                    ELSE {player(f"1 + (i + s * 7) % {PLAYERS}")} END,
               false,
               CASE WHEN s = 1 AND i % 100 = 0 THEN NULL
                    ELSE $1::timestamptz - make_interval(mins => i % 43200) END,
               NULL, 0, NULL
          FROM generate_series(1, {MATCHES}) i, generate_series(0, 1) s
        """,
        # The seats of matches over, as the trigger on a match's end leaves them.
        """
        UPDATE match_seats s SET live = false FROM matches m
         WHERE m.match_id = s.match_id AND m.status NOT IN ('waiting', 'active')
        """,
        f"""{FIRE}
        INSERT INTO match_actions (match_id, version, seat, action, source, created_at)
        SELECT md5('m' || i)::uuid, v, v % 2, '{{"type": "pass"}}', 'player',
               $1::timestamptz - make_interval(mins => i % 43200)
          FROM generate_series(1, {MATCHES}) i, generate_series(1, {ACTIONS_PER_MATCH}) v
         WHERE i % 100 <> 0
        """,
        # Events of the matches whose events are kept.
        f"""
        INSERT INTO match_events (match_id, seq, version, kind, data, visible_to, created_at)
        SELECT md5('m' || i)::uuid, q, q / 2, 'bulk', '{{}}',
               CASE WHEN q % 3 = 0 THEN ARRAY[q % 2] END,
               $1::timestamptz - make_interval(mins => i % 43200)
          FROM generate_series(1, {MATCHES}) i, generate_series(1, {EVENTS_PER_MATCH}) q
         WHERE NOT (i % 100 <> 0 AND i % 10 <> 1 AND i % 20 <> 2 AND i % 50 <> 3
                    AND i % 43200 > 11520)
        """,
        # Tickets: matched and cancelled over the last 30 days, and a few hundred searching in
        # buckets of their own (3 and 4 seats), each a thousand of rating from the next, so
        # that the matcher looks at them at every turn and never seats them.
        f"""
        INSERT INTO match_tickets (ticket_id, player_id, game, ruleset, seats, options, loadout,
                                   rating, status, match_id, seat, created_at, matched_at,
                                   cancelled_at)
        SELECT md5('t' || i)::uuid, {player(f"1 + i % {PLAYERS}")}, {GAME}, {RULESET}, 2,
               {OPTIONS}, 'null', 25, CASE WHEN i % 10 < 7 THEN 'matched' ELSE 'cancelled' END,
               CASE WHEN i % 10 < 7 THEN md5('m' || (1 + i % {MATCHES}))::uuid END,
               CASE WHEN i % 10 < 7 THEN 0 END,
               $1::timestamptz - make_interval(secs => i * 26 % 2592000) - interval '10 s',
               CASE WHEN i % 10 < 7
                    THEN $1::timestamptz - make_interval(secs => i * 26 % 2592000) END,
               CASE WHEN i % 10 >= 7
                    THEN $1::timestamptz - make_interval(secs => i * 26 % 2592000) END
          FROM generate_series(1, {TICKETS}) i
        """,
        f"""
        INSERT INTO match_tickets (ticket_id, player_id, game, ruleset, seats, options, loadout,
                                   rating, status, created_at)
        SELECT md5('ts' || i)::uuid, {player("i")}, 'necromancers',
               '{get_game("necromancers").ruleset}', 3 + i % 2, '{{}}', 'null',
               10000 + 1000 * i, 'searching', $1::timestamptz - make_interval(secs => i % 60)
          FROM generate_series(1, {SEARCHING_TICKETS}) i
        """,
        # Stored answers of the last 20 hours, and a thousand past their time to live.
        f"""
        INSERT INTO idempotency_keys (player_id, key, request_hash, response, created_at)
        SELECT {player(f"1 + i % {PLAYERS}")}, 'k' || i, '\\x00', NULL,
               $1::timestamptz - make_interval(secs => CASE WHEN i <= 1000 THEN 90000 + i
                                                            ELSE i % 72000 END)
          FROM generate_series(1, {IDEMPOTENCY_KEYS}) i
        """,
        # A device for a quarter of the players; sessions (a fifth revoked, over the last days)
        # with their refresh tokens.
        f"""
        INSERT INTO devices (device_hash, player_id, created_at)
        SELECT decode(md5('d' || i), 'hex'), {player("i")}, $1::timestamptz - interval '5 days'
          FROM generate_series(1, {PLAYERS}) i WHERE i % 4 = 1 AND i % 25 <> 0
        """,
        f"""
        INSERT INTO sessions (session_id, player_id, created_at, revoked_at)
        SELECT md5('s' || i)::uuid, {player(f"1 + i % {PLAYERS}")},
               $1::timestamptz - make_interval(secs => i * 9 % 2592000),
               CASE WHEN i % 5 = 0 THEN $1::timestamptz - make_interval(secs => i * 7 % 2592000)
               END
          FROM generate_series(1, {SESSIONS}) i
        """,
        f"""
        INSERT INTO refresh_tokens (token_hash, session_id, issued_at, expires_at, used_at,
                                    successor)
        SELECT decode(md5('rt' || i), 'hex'), md5('s' || i)::uuid, $1::timestamptz,
               $1::timestamptz + interval '60 days', NULL, NULL
          FROM generate_series(1, {SESSIONS}) i
        """,
        # Every game's board this season: ordinals from -14 to 34 or so, so that a new rated
        # player lands inside the board.
        f"""{FIRE}
        INSERT INTO game_ratings (player_id, game, season, mu, sigma, matches, updated_at)
        SELECT {player(f"1 + (i * 4 + g) % {PLAYERS}")}, (ARRAY{list(GAMES)})[g + 1], '{season}',
               10 + (i::bigint * 7919 % 3000) / 100.0, 2 + (i % 600) / 100.0, 1 + i % 40,
               $1::timestamptz
          FROM generate_series(0, 3) g, generate_series(1, {RATED_PER_GAME}) i
        """,
        # Who moved whose rating: the last two days, half past the repeat window.
        f"""
        INSERT INTO rated_pairs (player_id, owner_id, rated_at)
        SELECT {player(f"1 + i % {PLAYERS}")}, {player(f"1 + (i * 31 + 5) % {PLAYERS}")},
               $1::timestamptz - make_interval(secs => i * 17 % 172800)
          FROM generate_series(1, {RATED_PAIRS}) i
        ON CONFLICT DO NOTHING
        """,
        # Buckets still refilling (spent lately): an address's or a player's.
        f"""
        INSERT INTO rate_buckets (kind, key, tokens, rate, burst, granted, updated_at)
        SELECT 'bulk', 'key' || i, 1, 0.001, 50, true, $1::timestamptz
          FROM generate_series(1, {RATE_BUCKETS}) i
        """,
        # The hourly roll-ups of 14 days (pool) and 7 days (pairings, match actions).
        f"""
        INSERT INTO pool_counts (ruleset, round, hour, shard, snapshots)
        SELECT '{DEFAULT_RULESET}', r,
               date_trunc('hour', $1::timestamptz) - make_interval(hours => h), s, 3
          FROM generate_series(1, 10) r, generate_series(0, 335) h, generate_series(0, 3) s
        """,
        """
        INSERT INTO pairing_stats (hour, round, rung, shard, pairings, gap_buckets, ms_buckets)
        SELECT date_trunc('hour', $1::timestamptz) - make_interval(hours => h), r, rung, s, 2,
               '{1,1,0,0,0,0,0,0,0}', '{1,1,0,0,0,0,0,0,0,0,0}'
          FROM generate_series(0, 167) h, generate_series(1, 10) r,
               unnest(ARRAY['same_round_100', 'same_round_200', 'same_round_400',
                            'same_round_any', 'previous_round', 'next_round', 'bot']) rung,
               generate_series(0, 0) s
        """,
        f"""
        INSERT INTO match_stats (hour, game, bucket, shard, actions, timeouts)
        SELECT date_trunc('hour', $1::timestamptz) - make_interval(hours => h),
               (ARRAY{list(GAMES)})[1 + g], b, s, 5, 0
          FROM generate_series(0, 167) h, generate_series(0, 3) g, generate_series(0, 12) b,
               generate_series(0, 1) s
        ON CONFLICT DO NOTHING
        """,
        # A twenty-fifth of the players deleted (at the starting rating, where the autobattler's
        # board walks), as the service deletes one: its triggers take them off the boards.
        f"""{FIRE}
        UPDATE players p SET name = NULL, deleted_at = $1::timestamptz - make_interval(secs => i),
                             tokens_after = $1::timestamptz - make_interval(secs => i)
          FROM generate_series(25, {PLAYERS}, 25) i
         WHERE p.player_id = {player("i")}
        """,
    ]


@dataclass(frozen=True)
class Loaded:
    rows: int
    seconds: float
    # Each statement's first words and seconds, the slowest first.
    slowest: list[tuple[str, float]]


async def load(database_url: str, season: str) -> Loaded:
    """Fill the tables of a database whose schema is applied, then ANALYZE them."""
    started = time.monotonic()
    conn = await asyncpg.connect(database_url)
    rows = 0
    try:
        await conn.execute("SET session_replication_role = replica")
        await conn.execute("INSERT INTO seasons (name) VALUES ($1) ON CONFLICT DO NOTHING", season)
        clock: datetime = await conn.fetchval("SELECT now()")
        timings = []
        for sql in _statements(season):
            at = time.monotonic()
            role = "origin" if sql.startswith(FIRE) else "replica"
            await conn.execute(f"SET session_replication_role = {role}")
            status = await conn.execute(sql, *([clock] if "$1" in sql else []))
            rows += int(status.split()[-1]) if status.startswith("INSERT") else 0
            timings.append((" ".join(sql.replace(FIRE, "").split()[:3]), time.monotonic() - at))
        at = time.monotonic()
        # Statistics from a smaller sample: the plans need the sizes and the spread, not detail.
        await conn.execute("SET default_statistics_target = 30")
        await conn.execute("ANALYZE")
        timings.append(("ANALYZE", time.monotonic() - at))
    finally:
        await conn.close()
    slowest = sorted(timings, key=lambda t: -t[1])
    return Loaded(rows, time.monotonic() - started, slowest)


HEAVY_TABLES = (
    "devices",
    "sessions",
    "refresh_tokens",
    "runs",
    "matches",
    "match_seats",
    "match_tickets",
    "idempotency_keys",
    "rated_pairs",
    "battles",
)


def _heavy_statements() -> list[str]:
    """The player $1's own lists, each HEAVY long: what a player may grow by playing for
    years (or by scripting it), which its own requests then read."""
    return [
        f"""
        INSERT INTO devices (device_hash, player_id, created_at)
        SELECT decode(md5('hd' || $1::uuid::text || i), 'hex'), $1::uuid,
               now() - interval '1 day' + make_interval(secs => i)
          FROM generate_series(1, {HEAVY}) i
        """,
        # Sessions of sign-ins long past, revoked since (a sign-in past MAX_SESSIONS revokes
        # the oldest), with their refresh tokens used.
        f"""
        INSERT INTO sessions (session_id, player_id, created_at, revoked_at)
        SELECT md5('hs' || $1::uuid::text || i)::uuid, $1::uuid, now() - interval '3 days',
               now() - interval '2 days'
          FROM generate_series(1, {HEAVY}) i
        """,
        f"""
        INSERT INTO refresh_tokens (token_hash, session_id, issued_at, expires_at, used_at)
        SELECT decode(md5('hrt' || $1::uuid::text || i), 'hex'),
               md5('hs' || $1::uuid::text || i)::uuid, now() - interval '3 days',
               now() + interval '60 days', now() - interval '2 days'
          FROM generate_series(1, {HEAVY}) i
        """,
        f"""
        INSERT INTO runs (run_id, player_id, ruleset, seed, status, lives, wins, shop,
                          rating_at_start, rating_change, created_at, updated_at, ended_at,
                          version, met)
        SELECT md5('hr' || $1::uuid::text || i)::uuid, $1::uuid, '{DEFAULT_RULESET}', i, 'lost',
               0, 3, '{SHOP}', 1000, 0, now() - interval '2 days' + make_interval(secs => i),
               now() - interval '1 day', now() - interval '1 day', 9, '{{}}'
          FROM generate_series(1, {HEAVY}) i
        """,
        # Finished matches, long since swept, each with a seat of the player's.
        f"""
        INSERT INTO matches (match_id, game, ruleset, seed, seats, options, status, version,
                             last_seq, state, created_by, created_at, finished_at,
                             events_swept_at)
        SELECT md5('hm' || $1::uuid::text || i)::uuid, {GAME}, {RULESET}, i, 2, {OPTIONS},
               'finished', {ACTIONS_PER_MATCH}, {EVENTS_PER_MATCH}, '{{}}', $1::uuid,
               now() - interval '30 days' + make_interval(secs => i),
               now() - interval '29 days', now() - interval '20 days'
          FROM generate_series(1, {HEAVY}) i
        """,
        f"""
        INSERT INTO match_seats (match_id, seat, player_id, bot, joined_at, guard, live)
        SELECT md5('hm' || $1::uuid::text || i)::uuid, s,
               CASE WHEN s = 0 THEN $1::uuid ELSE {player("1 + i")} END, false,
               now() - interval '30 days' + make_interval(secs => i), 0, false
          FROM generate_series(1, {HEAVY}) i, generate_series(0, 1) s
        """,
        f"""
        INSERT INTO match_tickets (ticket_id, player_id, game, ruleset, seats, options, loadout,
                                   rating, status, match_id, seat, created_at, matched_at,
                                   cancelled_at)
        SELECT md5('ht' || $1::uuid::text || i)::uuid, $1::uuid, {GAME}, {RULESET}, 2,
               {OPTIONS}, 'null', 25,
               CASE WHEN i % 2 = 0 THEN 'matched' ELSE 'cancelled' END,
               CASE WHEN i % 2 = 0 THEN md5('hm' || $1::uuid::text || i)::uuid END,
               CASE WHEN i % 2 = 0 THEN 0 END, now() - interval '2 days',
               CASE WHEN i % 2 = 0 THEN now() - interval '2 days' END,
               CASE WHEN i % 2 = 1 THEN now() - interval '2 days' END
          FROM generate_series(1, {HEAVY}) i
        """,
        f"""
        INSERT INTO idempotency_keys (player_id, key, request_hash, created_at)
        SELECT $1::uuid, 'heavy' || i, '\\x00', now() - interval '1 hour'
          FROM generate_series(1, {HEAVY}) i
        """,
        f"""
        INSERT INTO rated_pairs (player_id, owner_id, rated_at)
        SELECT $1::uuid, {player("1 + i")}, now() - interval '1 hour'
          FROM generate_series(1, {HEAVY}) i
        ON CONFLICT DO NOTHING
        """,
        # Battles fought against the player's ghosts (in the default partition, long ago).
        f"""
        INSERT INTO battles (battle_id, run_id, round, player_snapshot_id, player_snapshot_at,
                             ghost_snapshot_id, ghost_snapshot_at, ghost_player_id, ruleset, seed,
                             pairing, rating_gap, pairing_ms, winner, rolls, health_player,
                             health_ghost, rating_change, lives_after, wins_after, status_after,
                             rating_pending, created_at, unrated)
        SELECT 20000000 + i, s.run_id, s.round, s.snapshot_id, s.created_at, s.snapshot_id,
               s.created_at, $1::uuid, s.ruleset, i, 'same_round_100', 0, 0.5, 'ghost', 7, 0, 3, 0,
               3, 1, 'shopping', 0, s.created_at, 'new_account'
          FROM generate_series(1, {HEAVY}) i
          JOIN snapshots s ON s.snapshot_id = {SNAPSHOTS} + i
        """,
    ]


async def load_heavy(database_url: str, player_id: uuid.UUID) -> float:
    """Give one player HEAVY rows in each of its own lists; the seconds it took."""
    started = time.monotonic()
    conn = await asyncpg.connect(database_url)
    try:
        await conn.execute("SET session_replication_role = replica")
        for sql in _heavy_statements():
            await conn.execute(sql, player_id)
        # The planner knows of the player's long lists, as it would once autovacuum ran.
        await conn.execute("SET default_statistics_target = 30")
        for table in HEAVY_TABLES:
            await conn.execute(f"ANALYZE {table}")
    finally:
        await conn.close()
    return time.monotonic() - started
