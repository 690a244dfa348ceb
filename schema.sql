-- The one source of the database schema, applied at every start-up: every statement is idempotent.

CREATE TABLE IF NOT EXISTS players (
    player_id  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name       text NOT NULL,
    rating     integer NOT NULL DEFAULT 1000,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX IF NOT EXISTS players_rating_idx ON players (rating DESC, player_id);

-- Stored answers of retried writes (Idempotency-Key): the same key and body give the same answer.
CREATE TABLE IF NOT EXISTS idempotency_keys (
    player_id    uuid NOT NULL REFERENCES players (player_id),
    key          text NOT NULL,
    request_hash bytea NOT NULL,
    status       integer,
    response     bytea,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (player_id, key)
);
