-- The one source of the database schema, applied at every start-up: every statement is idempotent.

CREATE TABLE IF NOT EXISTS players (
    player_id  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name       text NOT NULL,
    rating     integer NOT NULL DEFAULT 1000,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX IF NOT EXISTS players_rating_idx ON players (rating DESC, player_id);

-- Runs of the autobattler: one player's attempt, its shop (pure state as jsonb) and its score.
CREATE TABLE IF NOT EXISTS runs (
    run_id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    player_id       uuid NOT NULL REFERENCES players (player_id),
    ruleset         text NOT NULL,
    seed            numeric(20, 0) NOT NULL,
    status          text NOT NULL DEFAULT 'shopping' CHECK (status IN ('shopping', 'won', 'lost')),
    lives           integer NOT NULL,
    wins            integer NOT NULL DEFAULT 0,
    shop            jsonb NOT NULL,
    rating_at_start integer NOT NULL,
    rating_change   double precision NOT NULL DEFAULT 0,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    ended_at        timestamptz
);
-- Counts a run's changes (shop moves, battles), for retry-safe writes; added after the table.
ALTER TABLE runs ADD COLUMN IF NOT EXISTS version integer NOT NULL DEFAULT 0;

CREATE INDEX IF NOT EXISTS runs_player_idx ON runs (player_id, created_at DESC);

-- Immutable warbands, one per (run, round). Bot ghosts are snapshots without a run.
CREATE TABLE IF NOT EXISTS snapshots (
    snapshot_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id      uuid REFERENCES runs (run_id),
    player_id   uuid REFERENCES players (player_id),
    round       integer NOT NULL,
    ruleset     text NOT NULL,
    rating      integer NOT NULL,
    wins        integer NOT NULL,
    lives       integer NOT NULL,
    warband     jsonb NOT NULL,
    is_bot      boolean NOT NULL DEFAULT false,
    created_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (run_id, round)
);

-- Pairing walks this index up and down from the player's rating (store/snapshots.py); the
-- included columns let it filter by age and owner without touching the table.
CREATE INDEX IF NOT EXISTS snapshots_pairing_idx ON snapshots (ruleset, round, rating, snapshot_id)
    INCLUDE (created_at, player_id) WHERE NOT is_bot;

-- Resolved battles: their inputs (snapshots, ruleset, seed) and what they gave.
CREATE TABLE IF NOT EXISTS battles (
    battle_id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id             uuid NOT NULL REFERENCES runs (run_id),
    round              integer NOT NULL,
    player_snapshot_id bigint NOT NULL REFERENCES snapshots (snapshot_id),
    ghost_snapshot_id  bigint NOT NULL REFERENCES snapshots (snapshot_id),
    ghost_player_id    uuid REFERENCES players (player_id),
    ruleset            text NOT NULL,
    seed               numeric(20, 0) NOT NULL,
    pairing            text NOT NULL,
    rating_gap         integer NOT NULL,
    pairing_ms         real NOT NULL,
    winner             text NOT NULL CHECK (winner IN ('player', 'ghost', 'draw')),
    rolls              integer NOT NULL,
    health_player      integer NOT NULL,
    health_ghost       integer NOT NULL,
    rating_change      double precision NOT NULL,
    -- The run as this battle left it, so a retried end-turn gets the same answer.
    lives_after        integer NOT NULL,
    wins_after         integer NOT NULL,
    status_after       text NOT NULL,
    rating_pending     double precision NOT NULL,
    created_at         timestamptz NOT NULL DEFAULT now(),
    UNIQUE (run_id, round)
);

CREATE INDEX IF NOT EXISTS battles_ghost_player_idx ON battles (ghost_player_id);
CREATE INDEX IF NOT EXISTS battles_created_idx ON battles (created_at);

-- Matchmaking figures for operators, rolled up per hour as end-turns happen, so the ops API
-- reads a few hundred small rows instead of scanning snapshots or battles. Rows are sharded
-- (by run) so that concurrent end-turns of one round do not queue on one row's lock.
CREATE TABLE IF NOT EXISTS pool_counts (
    ruleset   text NOT NULL,
    round     integer NOT NULL,
    hour      timestamptz NOT NULL,
    shard     smallint NOT NULL,
    snapshots bigint NOT NULL,
    PRIMARY KEY (ruleset, round, hour, shard)
);

CREATE TABLE IF NOT EXISTS pairing_stats (
    hour        timestamptz NOT NULL,
    round       integer NOT NULL,
    rung        text NOT NULL,
    shard       smallint NOT NULL,
    pairings    bigint NOT NULL,
    gap_buckets bigint[] NOT NULL,  -- counts per bucket of service/store/stats.py GAP_BOUNDS
    ms_buckets  bigint[] NOT NULL,  -- counts per bucket of MS_BOUNDS (pairing latency)
    PRIMARY KEY (hour, round, rung, shard)
);

-- Stored answers of retried writes (Idempotency-Key): the same key and body give the same answer.
CREATE TABLE IF NOT EXISTS idempotency_keys (
    player_id    uuid NOT NULL REFERENCES players (player_id),
    key          text NOT NULL,
    request_hash bytea NOT NULL,
    response     bytea,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (player_id, key)
);
-- The answer's status is the endpoint's own; databases made before kept it in a column.
-- Looked up first, so that a start-up does not lock the table when there is nothing to drop.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM information_schema.columns
               WHERE table_name = 'idempotency_keys' AND column_name = 'status') THEN
        ALTER TABLE idempotency_keys DROP COLUMN status;
    END IF;
END $$;

-- Matches
-- A match is its seed plus an append-only action log; `state` caches the game's dump_state.
-- `version` counts the actions applied; `due_at` is when the server must act on its own
-- (a turn timer ran out, or bots still have moves left over from a bounded transaction).
CREATE TABLE IF NOT EXISTS matches (
    match_id     uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    game         text NOT NULL,
    ruleset      text NOT NULL,
    seed         numeric(20, 0) NOT NULL CHECK (seed >= 0 AND seed < 18446744073709551616),
    seats        integer NOT NULL CHECK (seats > 0),
    options      jsonb NOT NULL,
    status       text NOT NULL,
    version      integer NOT NULL DEFAULT 0,
    last_seq     bigint NOT NULL DEFAULT 0,
    state        jsonb NOT NULL,
    outcome      jsonb,
    turn_seconds integer CHECK (turn_seconds > 0),
    due_at       timestamptz,
    created_by   uuid NOT NULL REFERENCES players (player_id),
    created_at   timestamptz NOT NULL DEFAULT now(),
    finished_at  timestamptz
);

-- Waiting matches are due too: when nobody filled them in time, they expire.
DROP INDEX IF EXISTS matches_due_idx;
CREATE INDEX IF NOT EXISTS matches_open_due_idx ON matches (due_at)
    WHERE status IN ('waiting', 'active');
CREATE INDEX IF NOT EXISTS matches_created_idx ON matches (created_at DESC);

-- One row per seat: a player, a bot, or (while waiting) nobody; a player holds one seat at most.
CREATE TABLE IF NOT EXISTS match_seats (
    match_id  uuid NOT NULL REFERENCES matches (match_id),
    seat      integer NOT NULL,
    player_id uuid REFERENCES players (player_id),
    bot       boolean NOT NULL,
    joined_at timestamptz,
    -- What the seat brought (a deck list, a character…); NULL for a game that takes none.
    loadout   jsonb,
    -- The version at which the seat's prompt last changed: a seat acting at an older version
    -- has not seen what it is asked now (409); changes elsewhere leave it alone.
    guard     integer NOT NULL DEFAULT 0,
    -- The fingerprint of what the seat is asked now; NULL when it is asked nothing.
    prompt    text,
    PRIMARY KEY (match_id, seat),
    UNIQUE (match_id, player_id),
    CHECK (NOT (bot AND player_id IS NOT NULL))
);

CREATE INDEX IF NOT EXISTS match_seats_player_idx ON match_seats (player_id);

-- The action log: action number `version` took the match from version - 1 to version.
CREATE TABLE IF NOT EXISTS match_actions (
    match_id   uuid NOT NULL REFERENCES matches (match_id),
    version    integer NOT NULL,
    seat       integer NOT NULL,
    action     jsonb NOT NULL,
    source     text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (match_id, version)
);

-- Databases made before these columns and values existed get them here.
ALTER TABLE match_seats ADD COLUMN IF NOT EXISTS loadout jsonb;
ALTER TABLE match_seats ADD COLUMN IF NOT EXISTS guard integer NOT NULL DEFAULT 0;
ALTER TABLE match_seats ADD COLUMN IF NOT EXISTS prompt text;
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'matches_status_allowed') THEN
        ALTER TABLE matches DROP CONSTRAINT IF EXISTS matches_status_check;
        ALTER TABLE matches ADD CONSTRAINT matches_status_allowed
            CHECK (status IN ('waiting', 'active', 'finished', 'expired'));
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'match_actions_source_allowed') THEN
        ALTER TABLE match_actions DROP CONSTRAINT IF EXISTS match_actions_source_check;
        ALTER TABLE match_actions ADD CONSTRAINT match_actions_source_allowed
            CHECK (source IN ('player', 'bot', 'timeout', 'resign'));
    END IF;
END $$;

-- What happened, numbered per match; `visible_to` NULL is public, else only those seats see it.
CREATE TABLE IF NOT EXISTS match_events (
    match_id   uuid NOT NULL REFERENCES matches (match_id),
    seq        bigint NOT NULL,
    version    integer NOT NULL,
    kind       text NOT NULL,
    data       jsonb NOT NULL,
    visible_to integer[],
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (match_id, seq)
);

-- Ops: what the matchmaking report and /metrics read, kept cheap as the tables grow.
CREATE INDEX IF NOT EXISTS runs_active_idx ON runs (ruleset) WHERE status = 'shopping';
DROP INDEX IF EXISTS matches_open_idx;
CREATE INDEX IF NOT EXISTS matches_live_idx ON matches (game, status)
    WHERE status IN ('waiting', 'active');
CREATE INDEX IF NOT EXISTS match_actions_created_idx ON match_actions (created_at);
