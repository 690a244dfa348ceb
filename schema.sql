-- The schema at the newest migration, to be read: every table with its columns in their order,
-- its constraints, indexes, functions and triggers, as a new database has them.
--
-- The database is changed only by the migrations in service/store/migrations/, applied by
-- `python -m service migrate` or at start-up; the service never applies this file. A change of
-- the schema is a new migration AND the same change here, and a test checks that they agree: a
-- database made from this file and one made by the migrations dump the same schema.

-- Players ---------------------------------------------------------------------------------------

-- Lasting identity (docs/api.md#players-and-sessions). A player may sign in with device ids:
-- client-made secrets of which only a keyed hash is kept. Deleting a player keeps its row
-- (runs, ghosts and matches other players rely on point at it) but not its name.
CREATE TABLE players (
    player_id    uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name         text,
    rating       integer NOT NULL DEFAULT 1000,
    created_at   timestamptz NOT NULL DEFAULT now(),
    -- Four digits shown after the name (`ana#4821`): two players of one name told apart.
    tag          smallint NOT NULL DEFAULT floor(random() * 10000)::smallint,
    -- When the player was deleted: its row stays, its name goes.
    deleted_at   timestamptz,
    -- Access tokens issued to the player before this are refused (sign-out everywhere).
    tokens_after timestamptz
);
-- The leaderboards hold live players only: each board's walks read a partial index that a
-- deleted player leaves, instead of stepping over its entry one by one. This is the
-- autobattler's.
CREATE INDEX players_leaderboard_idx ON players (rating DESC, player_id)
    WHERE deleted_at IS NULL;
CREATE INDEX players_tokens_after_idx ON players (tokens_after)
    WHERE tokens_after IS NOT NULL;

CREATE TABLE devices (
    device_hash  bytea PRIMARY KEY,
    player_id    uuid NOT NULL REFERENCES players (player_id),
    created_at   timestamptz NOT NULL DEFAULT now(),
    -- When the device last signed its player in, shown in the player's device list
    -- (docs/api.md#players-and-sessions); NULL until it does.
    last_used_at timestamptz
);
CREATE INDEX devices_player_idx ON devices (player_id);
-- A player's devices in the order they are listed, read MAX_DEVICES at most (an account linked
-- past it before the limit existed is read no further).
CREATE INDEX devices_player_linked_idx ON devices (player_id, created_at);

-- A session is what one sign-in started: every access token names it (`sid`), and its refresh
-- tokens follow one another, each used once. Revoking it refuses them all.
CREATE TABLE sessions (
    session_id uuid PRIMARY KEY,
    player_id  uuid NOT NULL REFERENCES players (player_id),
    created_at timestamptz NOT NULL DEFAULT now(),
    revoked_at timestamptz
);
CREATE INDEX sessions_player_idx ON sessions (player_id);
CREATE INDEX sessions_revoked_idx ON sessions (revoked_at)
    WHERE revoked_at IS NOT NULL;
-- A player's live sessions, oldest first: those a sign-in past MAX_SESSIONS revokes, and those
-- a sign-out everywhere revokes, found without reading the revoked ones a player piles up.
CREATE INDEX sessions_live_idx ON sessions (player_id, created_at)
    WHERE revoked_at IS NULL;

-- Refresh tokens by their SHA-256 (they are 256 random bits, so no key is needed): the one a
-- use replaced is kept, used, so that presenting it again is seen as the reuse it is.
CREATE TABLE refresh_tokens (
    token_hash bytea PRIMARY KEY,
    session_id uuid NOT NULL REFERENCES sessions (session_id) ON DELETE CASCADE,
    issued_at  timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    used_at    timestamptz,
    -- The token issued in its place when it was used.
    successor  bytea
);
CREATE INDEX refresh_tokens_session_idx ON refresh_tokens (session_id);

-- Leaderboard ranks: how many players hold each rating, kept by the triggers below in the
-- transaction of every change to players, so that a rank (1 + the players rated strictly
-- higher) is a sum over a few thousand of these rows instead of a count over the players.
-- Rows are sharded by player (the id's last byte) so that new players, who all start at the
-- same rating, do not queue on one row's lock.
CREATE TABLE rating_counts (
    rating  integer NOT NULL,
    shard   smallint NOT NULL,
    players integer NOT NULL,
    PRIMARY KEY (rating, shard)
);

CREATE FUNCTION rating_shard(player_id uuid) RETURNS smallint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT (get_byte(uuid_send(player_id), 15) % 8)::smallint
$$;

-- One upsert per statement, whatever the number of rows it changed (a bulk load counts in
-- one go), taking its rows' locks in key order, so that two statements never wait on each
-- other in a cycle. An update that leaves every rating as it was writes nothing. A deleted
-- player is not counted: the update that sets its `deleted_at` takes it out.
CREATE FUNCTION count_ratings() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO rating_counts AS c (rating, shard, players)
        SELECT rating, rating_shard(player_id), count(*) FROM new_rows
         WHERE deleted_at IS NULL
         GROUP BY 1, 2 ORDER BY 1, 2
        ON CONFLICT (rating, shard) DO UPDATE SET players = c.players + excluded.players;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO rating_counts AS c (rating, shard, players)
        SELECT rating, rating_shard(player_id), -count(*) FROM old_rows
         WHERE deleted_at IS NULL
         GROUP BY 1, 2 ORDER BY 1, 2
        ON CONFLICT (rating, shard) DO UPDATE SET players = c.players + excluded.players;
    ELSE
        INSERT INTO rating_counts AS c (rating, shard, players)
        SELECT rating, rating_shard(player_id), sum(delta)
          FROM (SELECT rating, player_id, -1 AS delta FROM old_rows WHERE deleted_at IS NULL
                UNION ALL
                SELECT rating, player_id, 1 FROM new_rows WHERE deleted_at IS NULL) AS moved
         GROUP BY 1, 2 HAVING sum(delta) <> 0 ORDER BY 1, 2
        ON CONFLICT (rating, shard) DO UPDATE SET players = c.players + excluded.players;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER players_rating_counts_insert AFTER INSERT ON players
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_ratings();
CREATE TRIGGER players_rating_counts_update AFTER UPDATE ON players
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION count_ratings();
CREATE TRIGGER players_rating_counts_delete AFTER DELETE ON players
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION count_ratings();

-- The autobattler -------------------------------------------------------------------------------

-- Runs of the autobattler: one player's attempt, its shop (pure state as jsonb) and its score.
-- A run left idle ends 'abandoned' (docs/rules/cryptids.md#abandoned-runs), and only an
-- established owner's ghost moves a rating, once a day per player at most
-- (docs/rules/cryptids.md#rated-ghosts).
CREATE TABLE runs (
    run_id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    player_id       uuid NOT NULL REFERENCES players (player_id),
    ruleset         text NOT NULL,
    seed            numeric(20, 0) NOT NULL,
    status          text NOT NULL DEFAULT 'shopping',
    lives           integer NOT NULL,
    wins            integer NOT NULL DEFAULT 0,
    shop            jsonb NOT NULL,
    rating_at_start integer NOT NULL,
    rating_change   double precision NOT NULL DEFAULT 0,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    ended_at        timestamptz,
    -- Counts a run's changes (shop moves, battles), for retry-safe writes.
    version         integer NOT NULL DEFAULT 0,
    -- The players of the ghosts the run has fought, kept on the run (the end-turn statement
    -- appends them) so that an end-turn reads them with the run, without a plan over the
    -- battles' partitions, which locks every one of them at each execution.
    met             uuid[] NOT NULL DEFAULT '{}'
);
-- NOT VALID: it replaced the table's first CHECK, whose rows satisfied it already, without
-- reading them; a new database has it NOT VALID as well.
ALTER TABLE runs ADD CONSTRAINT runs_status_allowed
    CHECK (status IN ('shopping', 'won', 'lost', 'abandoned')) NOT VALID;
CREATE INDEX runs_player_idx ON runs (player_id, created_at DESC);
-- The open runs, for the ops report and /metrics, and for the idle sweep: an index on
-- updated_at would make every shop move a non-HOT update.
CREATE INDEX runs_active_idx ON runs (ruleset) WHERE status = 'shopping';
-- A player's open runs, counted at every start (MAX_OPEN_RUNS): a run leaves the index when it
-- ends, an update that is not HOT already, since status is in runs_active_idx's predicate.
CREATE INDEX runs_open_idx ON runs (player_id, created_at) WHERE status = 'shopping';
-- Runs that played a battle: ended won or lost, or abandoned past round 1 (its shop's round is
-- the battles played + 1). Only these make a ghost's owner established
-- (docs/rules/cryptids.md#rated-ghosts): runs started and abandoned at once would be free.
-- The owner's count reads at most RATED_GHOST_MIN_RUNS entries of this index, however many
-- empty runs the owner has abandoned.
CREATE INDEX runs_fought_idx ON runs (player_id)
    WHERE status IN ('won', 'lost') OR (status = 'abandoned' AND (shop ->> 'round')::integer > 1);

-- Snapshots and battles are partitioned by week of created_at (UTC, from Monday), so that the
-- pairing query reads only the partitions of the pool's time-to-live and old weeks can be
-- detached whole (`python -m service partitions`).  Weeks rather than days: a statement that
-- finds a row by id alone is planned and run over every partition kept (5 ms of planning with
-- 66 days), and weeks keep them few; the pairing scans still read two weeks at most. A
-- partitioned table's keys must hold its partition key, and PostgreSQL before 17 has no
-- identity columns on one: ids come from sequences owned by their columns
-- (pg_get_serial_sequence still finds them) and keys are (id, created_at).
-- A database made before the partitioning (converted by migration 1) also has a partition
-- `<table>_legacy` from MINVALUE to the end of the week of its conversion, holding its old
-- rows; the constraints are named as its old ones were.

-- Immutable warbands, one per (run, round). Bot ghosts are snapshots without a run.
CREATE SEQUENCE snapshots_snapshot_id_seq;
CREATE TABLE snapshots (
    snapshot_id bigint NOT NULL DEFAULT nextval('snapshots_snapshot_id_seq'),
    run_id      uuid CONSTRAINT snapshots_run_id_fkey REFERENCES runs (run_id),
    player_id   uuid CONSTRAINT snapshots_player_id_fkey REFERENCES players (player_id),
    round       integer NOT NULL,
    ruleset     text NOT NULL,
    rating      integer NOT NULL,
    wins        integer NOT NULL,
    lives       integer NOT NULL,
    warband     jsonb NOT NULL,
    is_bot      boolean NOT NULL DEFAULT false,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (snapshot_id, created_at)
) PARTITION BY RANGE (created_at);
ALTER SEQUENCE snapshots_snapshot_id_seq OWNED BY snapshots.snapshot_id;

-- Pairing walks this index up and down from the player's rating (pairing_candidates below);
-- the included columns let it filter by age and owner without touching the table.
CREATE INDEX snapshots_pairing_idx ON snapshots (ruleset, round, rating, snapshot_id)
    INCLUDE (created_at, player_id) WHERE NOT is_bot;
CREATE INDEX snapshots_run_round_idx ON snapshots (run_id, round);

-- The pairing query (store/snapshots.py `nearest`): two range scans of snapshots_pairing_idx,
-- one upward and one downward from the rating, each stopping after `p_limit` eligible rows, so
-- that cost grows with the limit, not with the pool. The scans read the index alone; only the
-- candidates found fetch their warbands, each from the one partition its key names. The age
-- bounds (closed at now(), so that the default partition is left out too) prune every
-- partition outside the time-to-live as the query starts. It is a function for its generic
-- plan: a custom plan, which PostgreSQL prefers here, is planned at every call over all the
-- partitions kept, and costs more than the query (1.5 ms against 0.4 ms with two months).
-- Its answer names each candidate by its key (id and creation time), so that the battle
-- fought against it can reference it without a look-up across partitions.
CREATE FUNCTION pairing_candidates(p_ruleset text, p_round integer, p_rating integer,
                                   p_exclude uuid[], p_ttl double precision,
                                   p_limit integer)
RETURNS TABLE (snapshot_id bigint, snapshot_at timestamptz, player_id uuid, rating integer,
               warband text)
LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT c.snapshot_id, c.created_at, c.player_id, c.rating,
           (SELECT s.warband::text FROM snapshots s
             WHERE s.snapshot_id = c.snapshot_id AND s.created_at = c.created_at
               AND s.created_at > now() - make_interval(secs => p_ttl)
               AND s.created_at <= now())
      FROM ((SELECT u.snapshot_id, u.created_at, u.player_id, u.rating FROM snapshots u
              WHERE NOT u.is_bot AND u.ruleset = p_ruleset AND u.round = p_round
                AND u.rating >= p_rating
                AND u.created_at > now() - make_interval(secs => p_ttl)
                AND u.created_at <= now()
                AND u.player_id <> ALL(p_exclude)
              ORDER BY u.rating, u.snapshot_id LIMIT p_limit)
            UNION ALL
            (SELECT d.snapshot_id, d.created_at, d.player_id, d.rating FROM snapshots d
              WHERE NOT d.is_bot AND d.ruleset = p_ruleset AND d.round = p_round
                AND d.rating < p_rating
                AND d.created_at > now() - make_interval(secs => p_ttl)
                AND d.created_at <= now()
                AND d.player_id <> ALL(p_exclude)
              ORDER BY d.rating DESC, d.snapshot_id DESC LIMIT p_limit)) c;
END $$;

-- Resolved battles: their inputs (snapshots, ruleset, seed) and what they gave. A snapshot is
-- named by its key, id and creation time, so that a battle's snapshots are found in one
-- partition each, and a partition that kept battles refer to cannot be detached. Snapshots
-- are never re-dated by the service; when someone does (an operator, a test ageing the pool),
-- the battles follow.
CREATE SEQUENCE battles_battle_id_seq;
CREATE TABLE battles (
    battle_id          bigint NOT NULL DEFAULT nextval('battles_battle_id_seq'),
    run_id             uuid NOT NULL CONSTRAINT battles_run_id_fkey REFERENCES runs (run_id),
    round              integer NOT NULL,
    player_snapshot_id bigint NOT NULL,
    player_snapshot_at timestamptz NOT NULL,
    ghost_snapshot_id  bigint NOT NULL,
    ghost_snapshot_at  timestamptz NOT NULL,
    ghost_player_id    uuid CONSTRAINT battles_ghost_player_id_fkey REFERENCES players (player_id),
    ruleset            text NOT NULL,
    seed               numeric(20, 0) NOT NULL,
    pairing            text NOT NULL,
    rating_gap         integer NOT NULL,
    pairing_ms         real NOT NULL,
    winner             text NOT NULL
                       CONSTRAINT battles_winner_check CHECK (winner IN ('player', 'ghost', 'draw')),
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
    -- Why a battle against a player's ghost moved no rating: 'new_account' or 'rated_recently';
    -- NULL when it did (a bot's battle, ghost_player_id NULL, never does).
    unrated            text,
    PRIMARY KEY (battle_id, created_at),
    CONSTRAINT battles_player_snapshot_fkey FOREIGN KEY (player_snapshot_id, player_snapshot_at)
        REFERENCES snapshots (snapshot_id, created_at) ON UPDATE CASCADE,
    CONSTRAINT battles_ghost_snapshot_fkey FOREIGN KEY (ghost_snapshot_id, ghost_snapshot_at)
        REFERENCES snapshots (snapshot_id, created_at) ON UPDATE CASCADE
) PARTITION BY RANGE (created_at);
ALTER SEQUENCE battles_battle_id_seq OWNED BY battles.battle_id;

CREATE INDEX battles_run_round_idx ON battles (run_id, round);
CREATE INDEX battles_ghost_player_idx ON battles (ghost_player_id);
CREATE INDEX battles_created_idx ON battles (created_at);

-- One battle, and one snapshot, per (run, round). Without a global unique index, a unique key
-- on a partitioned table must hold created_at, and two attempts at one turn are two
-- transactions with two created_at, so such a key would not see the second. Instead a row
-- takes its run's row lock (an end-turn already holds it) and looks for the round's row in the
-- partitions since the run began; under the lock no concurrent insert can slip past the look.
-- (The table is the trigger's argument: TG_TABLE_NAME names the partition.)
CREATE FUNCTION once_per_round() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    began timestamptz;
    taken boolean;
BEGIN
    SELECT created_at INTO began FROM runs WHERE run_id = NEW.run_id FOR NO KEY UPDATE;
    IF TG_ARGV[0] = 'battles' THEN
        taken := EXISTS (SELECT 1 FROM battles
                          WHERE run_id = NEW.run_id AND round = NEW.round AND created_at >= began);
    ELSE
        taken := EXISTS (SELECT 1 FROM snapshots
                          WHERE run_id = NEW.run_id AND round = NEW.round AND created_at >= began);
    END IF;
    IF taken THEN
        RAISE unique_violation USING
            MESSAGE = format('%s of run %s, round %s, exists already', TG_ARGV[0], NEW.run_id,
                             NEW.round),
            CONSTRAINT = TG_ARGV[0] || '_once_per_round';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER snapshots_once_per_round BEFORE INSERT ON snapshots
    FOR EACH ROW WHEN (NEW.run_id IS NOT NULL) EXECUTE FUNCTION once_per_round('snapshots');
CREATE TRIGGER battles_once_per_round BEFORE INSERT ON battles
    FOR EACH ROW EXECUTE FUNCTION once_per_round('battles');

-- Weekly partitions, named after their Monday (`snapshots_p20260105`), from `weeks_back` weeks
-- before this one (UTC) to `weeks_ahead` after; made each hour by a task of the service
-- (store/partitions.py), so that an insert finds its week's partition. A week is skipped when
-- a partition covers it already (a converted database's legacy one) or the default partition
-- (the safety net for rows outside every week made) already holds rows of it: those rows stay
-- where they are, readable.
CREATE FUNCTION ensure_partitions(weeks_ahead integer DEFAULT 2,
                                  weeks_back integer DEFAULT 0)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
    monday date := date_trunc('week', now() AT TIME ZONE 'UTC')::date;
    day date;
    parent text;
    name text;
    made integer := 0;
BEGIN
    -- Instances starting or keeping ahead at once take turns (the lock apply_schema holds).
    PERFORM pg_advisory_xact_lock(727274);
    FOR offset_weeks IN -weeks_back..weeks_ahead LOOP
        day := monday + 7 * offset_weeks;
        FOREACH parent IN ARRAY ARRAY['snapshots', 'battles'] LOOP
            name := format('%s_p%s', parent, to_char(day, 'YYYYMMDD'));
            CONTINUE WHEN to_regclass(name) IS NOT NULL;
            BEGIN
                EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)',
                               name, parent, day::timestamp AT TIME ZONE 'UTC',
                               (day + 7)::timestamp AT TIME ZONE 'UTC');
                made := made + 1;
            EXCEPTION WHEN invalid_object_definition OR check_violation THEN
                RAISE NOTICE 'partition % not made: %', name, SQLERRM;
            END;
        END LOOP;
    END LOOP;
    RETURN made;
END $$;

CREATE TABLE snapshots_default PARTITION OF snapshots DEFAULT;
CREATE TABLE battles_default PARTITION OF battles DEFAULT;
-- A new database has this week's partitions and the next two's, as the migrations leave it.
SELECT ensure_partitions();

-- Matchmaking figures for operators, rolled up per hour as end-turns happen, so the ops API
-- reads a few hundred small rows instead of scanning snapshots or battles. Rows are sharded
-- (by run) so that concurrent end-turns of one round do not queue on one row's lock.
CREATE TABLE pool_counts (
    ruleset   text NOT NULL,
    round     integer NOT NULL,
    hour      timestamptz NOT NULL,
    shard     smallint NOT NULL,
    snapshots bigint NOT NULL,
    PRIMARY KEY (ruleset, round, hour, shard)
);
-- The pool depth reads the hours of the snapshots' time-to-live; without this index a plan
-- without skip scans (a generic one, or PostgreSQL before 18) reads every hour ever counted.
-- The end-turn's upsert changes only `snapshots`, which no index holds: it can stay HOT.
CREATE INDEX pool_counts_hour_idx ON pool_counts (ruleset, hour);

CREATE TABLE pairing_stats (
    hour        timestamptz NOT NULL,
    round       integer NOT NULL,
    rung        text NOT NULL,
    shard       smallint NOT NULL,
    pairings    bigint NOT NULL,
    gap_buckets bigint[] NOT NULL,  -- counts per bucket of service/store/stats.py GAP_BOUNDS
    ms_buckets  bigint[] NOT NULL,  -- counts per bucket of MS_BOUNDS (pairing latency)
    PRIMARY KEY (hour, round, rung, shard)
);

-- When each ghost owner last moved each player's rating. Rows older than
-- RATED_GHOST_REPEAT_SECONDS decide nothing and are swept with the idle runs.
CREATE TABLE rated_pairs (
    player_id uuid NOT NULL,
    owner_id  uuid NOT NULL,
    rated_at  timestamptz NOT NULL,
    PRIMARY KEY (player_id, owner_id)
);
CREATE INDEX rated_pairs_rated_idx ON rated_pairs (rated_at);

-- Requests --------------------------------------------------------------------------------------

-- Stored answers of retried writes (Idempotency-Key): the same key and body give the same answer.
-- The answer's status is the endpoint's own.
CREATE TABLE idempotency_keys (
    player_id    uuid NOT NULL REFERENCES players (player_id),
    key          text NOT NULL,
    request_hash bytea NOT NULL,
    response     bytea,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (player_id, key)
);
-- For the retention sweep of old keys.
CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at);

-- Rate limits shared by every process and instance (service/store/limits.py): one token bucket
-- per (kind, key), e.g. ('registrations_per_day', an address) or ('requests', a player id).
-- UNLOGGED: no WAL, so a take costs no fsync and waits for no synchronous replica; after a
-- crash or a failover the table is empty, and every bucket starts full again. Room is left
-- in each page so that the constant updates stay HOT. Full buckets are swept by every instance.
CREATE UNLOGGED TABLE rate_buckets (
    kind       text NOT NULL,
    key        text NOT NULL,
    tokens     double precision NOT NULL,
    rate       double precision NOT NULL,
    burst      double precision NOT NULL,
    granted    boolean NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (kind, key)
) WITH (fillfactor = 70);

-- Matches ---------------------------------------------------------------------------------------

-- A match is its seed plus an append-only action log; `state` caches the game's dump_state.
-- `version` counts the actions applied; `due_at` is when the server must act on its own
-- (a turn timer ran out, or bots still have moves left over from a bounded transaction).
CREATE TABLE matches (
    match_id        uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    game            text NOT NULL,
    ruleset         text NOT NULL,
    seed            numeric(20, 0) NOT NULL CHECK (seed >= 0 AND seed < 18446744073709551616),
    seats           integer NOT NULL CHECK (seats > 0),
    options         jsonb NOT NULL,
    status          text NOT NULL
                    CONSTRAINT matches_status_allowed
                    CHECK (status IN ('waiting', 'active', 'finished', 'expired')),
    version         integer NOT NULL DEFAULT 0,
    last_seq        bigint NOT NULL DEFAULT 0,
    state           jsonb NOT NULL,
    outcome         jsonb,
    turn_seconds    integer CHECK (turn_seconds > 0),
    due_at          timestamptz,
    -- NULL for a match an operator made (a lesson, a tournament, bots alone): it has no creator.
    created_by      uuid REFERENCES players (player_id),
    created_at      timestamptz NOT NULL DEFAULT now(),
    finished_at     timestamptz,
    -- When a finished match's events were swept; its replay is then rebuilt from the action log.
    events_swept_at timestamptz
);
-- Waiting matches are due too: when nobody filled them in time, they expire.
CREATE INDEX matches_open_due_idx ON matches (due_at)
    WHERE status IN ('waiting', 'active');
CREATE INDEX matches_created_idx ON matches (created_at DESC);
-- For the ops report and /metrics.
CREATE INDEX matches_live_idx ON matches (game, status)
    WHERE status IN ('waiting', 'active');
-- The lobby's pages, each after a (time, match) cursor, newest first.
CREATE INDEX matches_waiting_page_idx ON matches (created_at DESC, match_id DESC)
    WHERE status = 'waiting';
-- Ended matches whose events are still kept, oldest end first.
CREATE INDEX matches_ended_idx ON matches (finished_at)
    WHERE status IN ('finished', 'expired') AND events_swept_at IS NULL;
-- The retention sweep's ended matches by status (store/matches.py _ENDED_BATCH): its status is a
-- parameter, so a generic plan cannot use matches_ended_idx and read every match instead.
CREATE INDEX matches_unswept_idx ON matches (status, finished_at, match_id)
    WHERE events_swept_at IS NULL;

-- One row per seat: a player, a bot, or (while waiting) nobody; a player holds one seat at most.
CREATE TABLE match_seats (
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
    -- Whether the seat's match is still waiting or active. The seats a player holds in matches
    -- not over (counted against the caps at every create, join and ticket, locked by a
    -- deletion) are then read from a partial index as small as those caps, not from every
    -- seat the player ever held. Kept by a trigger on the match's end, whatever statement
    -- ends it.
    live      boolean NOT NULL DEFAULT true,
    PRIMARY KEY (match_id, seat),
    UNIQUE (match_id, player_id),
    CHECK (NOT (bot AND player_id IS NOT NULL))
);
CREATE INDEX match_seats_player_idx ON match_seats (player_id);
-- A player's own list of matches, a page after a (time, match) cursor, newest first.
CREATE INDEX match_seats_player_page_idx
    ON match_seats (player_id, joined_at DESC, match_id DESC) WHERE player_id IS NOT NULL;
-- The seats still free, which the ops figures count per game: without this index the count
-- reads every bot's seat (player_id is NULL there too) of every match ever played.
CREATE INDEX match_seats_free_idx ON match_seats (match_id)
    WHERE player_id IS NULL AND NOT bot;
CREATE INDEX match_seats_live_idx ON match_seats (player_id)
    WHERE live AND player_id IS NOT NULL;

CREATE FUNCTION match_seats_follow_end() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE match_seats SET live = false WHERE match_id = NEW.match_id AND live;
    RETURN NULL;
END $$;
CREATE TRIGGER matches_end_seats AFTER UPDATE OF status ON matches
    FOR EACH ROW
    WHEN (OLD.status IN ('waiting', 'active') AND NEW.status NOT IN ('waiting', 'active'))
    EXECUTE FUNCTION match_seats_follow_end();

-- The action log: action number `version` took the match from version - 1 to version.
CREATE TABLE match_actions (
    match_id   uuid NOT NULL REFERENCES matches (match_id),
    version    integer NOT NULL,
    seat       integer NOT NULL,
    action     jsonb NOT NULL,
    source     text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (match_id, version)
);
-- NOT VALID: the rows already there passed the narrower check this one replaced; a new
-- database has it NOT VALID as well.
ALTER TABLE match_actions ADD CONSTRAINT match_actions_source_known
    CHECK (source IN ('player', 'bot', 'timeout', 'resign', 'preference')) NOT VALID;
-- For the ops report and /metrics.
CREATE INDEX match_actions_created_idx ON match_actions (created_at);

-- What happened, numbered per match; `visible_to` NULL is public, else only those seats see it.
CREATE TABLE match_events (
    match_id   uuid NOT NULL REFERENCES matches (match_id),
    seq        bigint NOT NULL,
    version    integer NOT NULL,
    kind       text NOT NULL,
    data       jsonb NOT NULL,
    visible_to integer[],
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (match_id, seq)
);

-- Match figures for operators, rolled up per hour as actions are stored, so that the ops API
-- reads a few hundred rows instead of a day of match_actions joined to matches. A row counts
-- the actions of one game in one hour whose turn (the time since the match's action before)
-- fell in one bucket of match_turn_bounds() (service/store/stats.py TURN_BOUNDS; bucket 0: a
-- match's first action, which has no turn). Rows are sharded by match so that concurrent
-- matches do not queue on one row's lock.
CREATE TABLE match_stats (
    hour     timestamptz NOT NULL,
    game     text NOT NULL,
    bucket   smallint NOT NULL,
    shard    smallint NOT NULL,
    actions  bigint NOT NULL,
    timeouts bigint NOT NULL,
    PRIMARY KEY (hour, game, bucket, shard)
);

CREATE FUNCTION match_turn_bounds() RETURNS double precision[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT '{1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800, 3600}'::double precision[]
$$;

-- The bucket of a turn of `seconds`: bucket i (from 1) holds the turns from bound i - 1 (0 for
-- the first) up to bound i, the last one those past every bound; 0 when there is no turn.
CREATE FUNCTION match_turn_bucket(seconds double precision) RETURNS smallint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce(1 + width_bucket(seconds, match_turn_bounds()), 0)::smallint
$$;

-- One upsert per statement that stores actions (a move and the bots' replies come together);
-- a turn is measured from the action before, in the same statement or else in the table (one
-- key read).
CREATE FUNCTION count_match_actions() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO match_stats AS s (hour, game, bucket, shard, actions, timeouts)
    SELECT date_trunc('hour', a.created_at), m.game, match_turn_bucket(a.turn),
           (get_byte(uuid_send(a.match_id), 15) % 8)::smallint,
           count(*), count(*) FILTER (WHERE a.source = 'timeout')
      FROM (SELECT n.match_id, n.source, n.created_at,
                   extract(epoch FROM n.created_at - coalesce(
                       lag(n.created_at) OVER (PARTITION BY n.match_id ORDER BY n.version),
                       (SELECT p.created_at FROM match_actions p
                         WHERE p.match_id = n.match_id AND p.version = n.version - 1)))::float8
                   AS turn
              FROM new_rows n) AS a
      JOIN matches m USING (match_id)
     GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
    ON CONFLICT (hour, game, bucket, shard) DO UPDATE
        SET actions = s.actions + excluded.actions, timeouts = s.timeouts + excluded.timeouts;
    RETURN NULL;
END $$;
CREATE TRIGGER match_actions_stats AFTER INSERT ON match_actions
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION count_match_actions();

-- The matchmaking queue (docs/api.md#play-now-the-matchmaking-queue): a ticket waits, searching,
-- until the matcher seats its player in a match (matched) or the player cancels it. Options and
-- loadout are kept as the rules normalised them, so equal requests land in one bucket. `rating`
-- is the player's rating for the game when the ticket was queued, which the matcher compares.
CREATE TABLE match_tickets (
    ticket_id    uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    player_id    uuid NOT NULL REFERENCES players (player_id),
    game         text NOT NULL,
    ruleset      text NOT NULL,
    seats        integer NOT NULL,
    options      jsonb NOT NULL,
    loadout      jsonb NOT NULL,
    rating       float8 NOT NULL,
    status       text NOT NULL DEFAULT 'searching'
                 CHECK (status IN ('searching', 'matched', 'cancelled')),
    match_id     uuid REFERENCES matches (match_id),
    seat         integer,
    created_at   timestamptz NOT NULL DEFAULT now(),
    matched_at   timestamptz,
    -- When the player cancelled the ticket; the queue's health reads the last hour's.
    cancelled_at timestamptz
);
-- One searching ticket per player and game.
CREATE UNIQUE INDEX match_tickets_searching_idx ON match_tickets (player_id, game)
    WHERE status = 'searching';
-- What the matcher claims: one bucket's searching tickets, oldest first.
CREATE INDEX match_tickets_queue_idx
    ON match_tickets (game, ruleset, seats, created_at) WHERE status = 'searching';
-- The queue's health (docs/operations.md#matchmaking-health) reads the last hour's ended tickets.
CREATE INDEX match_tickets_matched_idx ON match_tickets (matched_at)
    WHERE status = 'matched';
CREATE INDEX match_tickets_cancelled_idx ON match_tickets (cancelled_at)
    WHERE status = 'cancelled';
-- A player's tickets matched lately: what a match socket announces
-- (docs/api.md#play-now-the-matchmaking-queue).
CREATE INDEX match_tickets_player_matched_idx ON match_tickets (player_id, matched_at)
    WHERE status = 'matched';

-- Ratings per game ------------------------------------------------------------------------------

-- Ratings of the turn-based games (docs/api.md#ratings-per-game-and-season): one row per
-- player, game and season, written in the transaction that stores the match's end. A season
-- is a named period; the current one is the latest started. `ordinal` (mu - 3 sigma) is the
-- rating shown and the leaderboard's order.
CREATE TABLE seasons (
    name       text PRIMARY KEY,
    started_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX seasons_started_idx ON seasons (started_at DESC, name DESC);

CREATE TABLE game_ratings (
    player_id      uuid NOT NULL REFERENCES players (player_id),
    game           text NOT NULL,
    season         text NOT NULL REFERENCES seasons (name),
    mu             float8 NOT NULL,
    sigma          float8 NOT NULL,
    ordinal        float8 GENERATED ALWAYS AS (mu - 3 * sigma) STORED,
    matches        integer NOT NULL DEFAULT 0,
    updated_at     timestamptz NOT NULL DEFAULT now(),
    -- Whether the rating's player is deleted, so that the per-game boards' index and counts
    -- leave it out; kept in step with the player's `deleted_at` by the triggers below.
    player_deleted boolean NOT NULL DEFAULT false,
    PRIMARY KEY (game, season, player_id)
);
CREATE INDEX game_ratings_player_idx ON game_ratings (player_id, season);
-- A per-game board: a game and season's ratings with a match played, of live players, in
-- ordinal order.
CREATE INDEX game_ratings_leaderboard_idx
    ON game_ratings (game, season, ordinal DESC, player_id)
    WHERE matches > 0 AND NOT player_deleted;

-- The flag follows the player's `deleted_at`, whatever writes either (the deletion writes only
-- its player's row): a rating made is flagged as its player is, and a player's deletion flags
-- its ratings.
CREATE FUNCTION game_ratings_follow_deletion() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE game_ratings SET player_deleted = NEW.deleted_at IS NOT NULL
     WHERE player_id = NEW.player_id AND player_deleted <> (NEW.deleted_at IS NOT NULL);
    RETURN NULL;
END $$;
CREATE FUNCTION game_ratings_born_flagged() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.player_deleted := EXISTS (SELECT 1 FROM players
                                   WHERE player_id = NEW.player_id AND deleted_at IS NOT NULL);
    RETURN NEW;
END $$;
CREATE TRIGGER game_ratings_player_deleted BEFORE INSERT ON game_ratings
    FOR EACH ROW EXECUTE FUNCTION game_ratings_born_flagged();
CREATE TRIGGER players_game_ratings_deleted AFTER UPDATE OF deleted_at ON players
    FOR EACH ROW WHEN ((OLD.deleted_at IS NULL) <> (NEW.deleted_at IS NULL))
    EXECUTE FUNCTION game_ratings_follow_deletion();

-- Per-game board ranks: how many players of each board hold an ordinal, at three grains, each
-- row keyed by where its bucket starts: whole units of ordinal (grain 0), 64ths of one (1), and
-- the ordinal itself (2). A rank, 1 + the players rated strictly higher, is then three short
-- sums whatever the board's size (store/game_ratings.py): the units above the ordinal's, the
-- 64ths above its own inside its unit, the ordinals above it inside its 64th. Ordinals are
-- floats, but players with the same results share one exactly (every first match's winner
-- against a newcomer), so the last grain counts a tie as one row rather than reading it. Rows
-- are sharded by player as rating_counts is, so that those winners do not queue on one row.
CREATE TABLE game_rating_counts (
    game    text NOT NULL,
    season  text NOT NULL,
    grain   smallint NOT NULL,
    ordinal float8 NOT NULL,
    shard   smallint NOT NULL,
    players integer NOT NULL,
    PRIMARY KEY (game, season, grain, ordinal, shard)
);

-- Where the bucket of `grain` that holds `ordinal` starts, and where it ends (excluded).
CREATE FUNCTION game_rating_bucket(grain integer, ordinal float8) RETURNS float8
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE grain WHEN 0 THEN floor(ordinal) WHEN 1 THEN floor(ordinal * 64) / 64
           ELSE ordinal END
$$;
CREATE FUNCTION game_rating_bucket_end(grain integer, ordinal float8) RETURNS float8
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE grain WHEN 0 THEN floor(ordinal) + 1 WHEN 1 THEN (floor(ordinal * 64) + 1) / 64
           ELSE ordinal END
$$;

-- Kept as count_ratings keeps rating_counts: one upsert per statement on game_ratings (a
-- match's end re-rates its players in one), taking its rows' locks in key order, so that two
-- matches ending together never wait on each other in a cycle; moves that cancel out (an
-- ordinal staying in its unit) write nothing. A row left at zero is deleted by the same
-- transaction, which holds its lock: the exact ordinals would otherwise pile up, one more at
-- each rating change. A rating counts while it has a match and its player is not deleted.
CREATE FUNCTION count_game_ratings() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    games text[];
    seasons text[];
    grains smallint[];
    ordinals float8[];
    shards smallint[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO game_rating_counts AS c (game, season, grain, ordinal, shard, players)
        SELECT r.game, r.season, g.grain, game_rating_bucket(g.grain, r.ordinal),
               rating_shard(r.player_id), count(*)
          FROM new_rows r, generate_series(0, 2) AS g(grain)
         WHERE r.matches > 0 AND NOT r.player_deleted
         GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
        ON CONFLICT (game, season, grain, ordinal, shard) DO UPDATE
            SET players = c.players + excluded.players;
        RETURN NULL;
    ELSIF TG_OP = 'DELETE' THEN
        WITH counted AS (
            INSERT INTO game_rating_counts AS c (game, season, grain, ordinal, shard, players)
            SELECT r.game, r.season, g.grain, game_rating_bucket(g.grain, r.ordinal),
                   rating_shard(r.player_id), -count(*)
              FROM old_rows r, generate_series(0, 2) AS g(grain)
             WHERE r.matches > 0 AND NOT r.player_deleted
             GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
            ON CONFLICT (game, season, grain, ordinal, shard) DO UPDATE
                SET players = c.players + excluded.players
            RETURNING c.game, c.season, c.grain, c.ordinal, c.shard, c.players)
        SELECT array_agg(game), array_agg(season), array_agg(grain), array_agg(ordinal),
               array_agg(shard)
          INTO games, seasons, grains, ordinals, shards
          FROM counted WHERE players = 0;
    ELSE
        WITH counted AS (
            INSERT INTO game_rating_counts AS c (game, season, grain, ordinal, shard, players)
            SELECT r.game, r.season, g.grain, game_rating_bucket(g.grain, r.ordinal),
                   rating_shard(r.player_id), sum(r.delta)
              FROM (SELECT game, season, ordinal, player_id, -1 AS delta FROM old_rows
                     WHERE matches > 0 AND NOT player_deleted
                    UNION ALL
                    SELECT game, season, ordinal, player_id, 1 FROM new_rows
                     WHERE matches > 0 AND NOT player_deleted) AS r,
                   generate_series(0, 2) AS g(grain)
             GROUP BY 1, 2, 3, 4, 5 HAVING sum(r.delta) <> 0 ORDER BY 1, 2, 3, 4, 5
            ON CONFLICT (game, season, grain, ordinal, shard) DO UPDATE
                SET players = c.players + excluded.players
            RETURNING c.game, c.season, c.grain, c.ordinal, c.shard, c.players)
        SELECT array_agg(game), array_agg(season), array_agg(grain), array_agg(ordinal),
               array_agg(shard)
          INTO games, seasons, grains, ordinals, shards
          FROM counted WHERE players = 0;
    END IF;
    IF games IS NOT NULL THEN
        DELETE FROM game_rating_counts c
         USING unnest(games, seasons, grains, ordinals, shards)
                   AS e(game, season, grain, ordinal, shard)
         WHERE (c.game, c.season, c.grain, c.ordinal, c.shard)
             = (e.game, e.season, e.grain, e.ordinal, e.shard)
           AND c.players = 0;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER game_ratings_counts_insert AFTER INSERT ON game_ratings
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_game_ratings();
CREATE TRIGGER game_ratings_counts_update AFTER UPDATE ON game_ratings
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION count_game_ratings();
CREATE TRIGGER game_ratings_counts_delete AFTER DELETE ON game_ratings
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION count_game_ratings();

-- The schema's own records ----------------------------------------------------------------------

-- The ledger: one row per migration applied (service/store/migrate.py makes it before any).
CREATE TABLE schema_migrations (
    -- The migration's number.
    version      integer PRIMARY KEY,
    name         text NOT NULL,
    -- The SHA-256 of the migration file's text.
    checksum     text NOT NULL,
    -- The lowest migration level whose code may still write once this one is applied
    -- (0 = any: an expand migration).
    writers_from integer NOT NULL DEFAULT 0,
    -- The service version that applied it.
    release      text NOT NULL,
    -- How long it took.
    seconds      double precision NOT NULL,
    applied_at   timestamptz NOT NULL DEFAULT now()
);

-- Kept for release 0.1.0's instances, which skip their schema.sql when they find its SHA-256
-- here (migration 2 records it, as migration 1's); a later release's migration drops it.
CREATE TABLE schema_applied (
    digest     text PRIMARY KEY,
    applied_at timestamptz NOT NULL DEFAULT now()
);
